"""Failure paths: fresh interpreters whose vendor library is hidden or replaced, and what the
backend reports there (driver status, diagnostics, when the library is mapped)."""

from __future__ import annotations

from conftest import run_python


def no_driver_script(backend: str, device_type: int, artifact: str, probes: str, checks: str = "") -> str:
    """A script for an interpreter whose driver is hidden: it imports the backend, runs
    `checks` on ``dev`` (``tvm.<backend>(0)``), prints the driver status, loads `artifact`
    (lazily, so that must work) as ``mod``, then runs every ``(name, lambda)`` of `probes`,
    each of which must raise RuntimeError or ValueError with the reason, never crash."""
    return f"""
import numpy as np, tvm
from tvm.backend.{backend} import detect_target
dev = tvm.{backend}(0)
assert dev.exist is False
assert dev.device_name is None
{checks}print("STATUS:", tvm.get_global_func("runtime.DeviceDriverStatus")({device_type}))
mod = tvm.runtime.load_module({artifact!r})
for what, fn in [
{probes}]:
    try:
        fn()
        print(what, "NO ERROR")
    except (RuntimeError, ValueError) as err:
        print(what, "RAISED", type(err).__name__, str(err).replace(chr(10), " "))
print("DONE")
"""


def run_without_driver(script: str, env: dict[str, str]) -> str:
    """Run a no_driver_script under `env`; its stdout, once every probe raised."""
    proc = run_python(script, env=env)
    assert "DONE" in proc.stdout, proc.stdout + proc.stderr
    assert "NO ERROR" not in proc.stdout, proc.stdout
    return proc.stdout


def driver_status(out: str) -> str:
    """The runtime.DeviceDriverStatus line a no_driver_script printed."""
    return out.split("STATUS:", 1)[1].splitlines()[0]


def run_diagnostics(env: dict[str, str]) -> str:
    """stdout of ``python -m tvm.backend`` (the diagnostics command) under `env`."""
    proc = run_python("import runpy; runpy.run_module('tvm.backend', run_name='__main__')", env=env)
    return proc.stdout


def vendor_library_mapping(backend: str, library: str, first_use: str) -> str:
    """Whether `library` is mapped after importing the backend and after `first_use` (one line
    of Python), printed as ``after import: <bool>`` / ``after first use: <bool>``."""
    proc = run_python(
        f"""
        def mapped():
            return {library!r} in open("/proc/self/maps").read()
        import tvm, tvm.backend.{backend}
        from tvm.backend import _dso
        assert {backend!r} in _dso.LOADED, "backend registered at import"
        print("after import:", mapped())
        {first_use}
        print("after first use:", mapped())
        """
    )
    return proc.stdout
