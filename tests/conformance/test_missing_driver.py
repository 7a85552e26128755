"""A machine without a backend's vendor library, for every device backend: importing and loading
an artifact still work (lazily), the device does not exist, the status names what was tried, the
variable that replaces the search and what to install, every device use is a clear error and the
diagnostics command shows the reason.  Each case is a fresh interpreter whose search is replaced
by a path that does not exist, so it behaves the same on a machine with the device."""

from __future__ import annotations

from pathlib import Path

from backend_testing.no_driver import driver_status, no_driver_script, run_diagnostics, run_without_driver
from declared import BACKENDS, Backend, each_backend
from drivers import DRIVERS, add_artifact


def with_devices(backend: Backend) -> bool:
    return bool(backend.device_types)


def run_without(backend: Backend, library: str) -> str:
    """The no-driver script's output with the backend's library replaced by `library`."""
    script = no_driver_script(backend.name, add_artifact(backend.name), ("empty", "detect", "sync"))
    return run_without_driver(script, {DRIVERS[backend.name].variable: library})


def test_every_device_backend_says_how_its_driver_is_found():
    assert sorted(b.name for b in BACKENDS if with_devices(b)) == sorted(DRIVERS)
    assert [name for name in DRIVERS if not Path(add_artifact(name)).is_file()] == []


@each_backend(with_devices)
def test_missing_library(backend: Backend):
    driver = DRIVERS[backend.name]
    path = f"/nonexistent/{driver.library}"
    out = run_without(backend, path)
    status = driver_status(out)
    for part in (driver.missing, path, driver.advice, driver.variable):
        assert part in status, (part, status)
    assert f"empty RAISED RuntimeError {driver.unavailable}" in out
    assert f"sync RAISED RuntimeError {driver.unavailable}" in out
    assert "detect RAISED ValueError" in out


@each_backend(with_devices)
def test_library_of_another_kind(backend: Backend):
    status = driver_status(run_without(backend, "libm.so.6"))
    assert DRIVERS[backend.name].wrong_kind in status, status


@each_backend(with_devices)
def test_diagnostics_say_why(backend: Backend):
    driver = DRIVERS[backend.name]
    out = run_diagnostics({driver.variable: f"/nonexistent/{driver.library}"})
    (line,) = [ln for ln in out.splitlines() if ln.startswith(f"{backend.name} ")]
    assert "loaded" in line, line
    assert driver.missing in out, out
