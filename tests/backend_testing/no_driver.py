"""Failure paths: fresh interpreters whose vendor library is hidden or replaced, and what the
backend reports there (driver status, diagnostics)."""

from __future__ import annotations

from conftest import run_module


def no_driver_script(
    backend: str, artifact: str, probes: tuple[str, ...], host_device: int | None = None
) -> list[str]:
    """The arguments of children/no_driver.py for an interpreter whose driver is hidden: it checks
    that ``tvm.<backend>(0)`` (and the pinned-host device ``host_device``) does not exist, prints
    the driver status, loads `artifact` (lazily, so that must work), then makes each device use
    named in `probes`, each of which must raise RuntimeError or ValueError with the reason."""
    return [
        backend,
        artifact,
        *(["--host-device", str(host_device)] if host_device is not None else []),
        *probes,
    ]


def run_without_driver(script: list[str], env: dict[str, str]) -> str:
    """Run children/no_driver.py with `script`'s arguments under `env`; its stdout, once every
    probe raised."""
    proc = run_module("children.no_driver", *script, env=env)
    assert "DONE" in proc.stdout, proc.stdout + proc.stderr
    assert "NO ERROR" not in proc.stdout, proc.stdout
    return proc.stdout


def driver_status(out: str) -> str:
    """The runtime.DeviceDriverStatus line a no_driver_script printed."""
    return out.split("STATUS:", 1)[1].splitlines()[0]


def run_diagnostics(env: dict[str, str]) -> str:
    """stdout of ``python -m tvm.backend`` (the diagnostics command) under `env`."""
    proc = run_module("tvm.backend", env=env)
    return proc.stdout
