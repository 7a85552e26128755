"""Artifacts that need a backend that is not loaded name the wheel to install."""

from __future__ import annotations

from conftest import ARTIFACTS, run_python


def _missing_backend_errors(artifact: str, kernel: str, env: dict[str, str]) -> str:
    """Load ``artifact`` in a fresh interpreter with ``env`` (its device backend not loaded) and
    call its device kernel directly: the load must succeed (other functions of a multi-target
    library may still run) and the call must fail, naming what to install."""
    proc = run_python(
        f"""
        import tvm
        mod = tvm.runtime.load_module({str(ARTIFACTS / artifact)!r})
        print("LOADED", [m.kind for m in mod.imports])
        (device_module,) = mod.imports
        assert device_module.implements_function({kernel!r})
        assert not device_module.implements_function("no_such_kernel")
        try:
            device_module[{kernel!r}]()
        except RuntimeError as e:
            print("CALL", e)
        """,
        env=env,
    )
    return proc.stdout


def test_opencl_artifact_without_backend_names_the_wheel():
    out = _missing_backend_errors("opencl/add.so", "add_kernel", {"TVM_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert "LOADED ['opencl']" in out, out
    assert "CALL Cannot run kernel 'add_kernel' of this artifact's 'opencl' device module" in out, out
    assert "pip install tvm-runtime-opencl" in out, out
    assert "not registered" not in out


def test_cuda_artifact_without_backend_names_the_wheel():
    out = _missing_backend_errors("cuda/add.so", "add_kernel", {"TVM_BACKENDS": "none"})
    assert "LOADED ['cuda']" in out, out
    assert "pip install tvm-runtime-cuda" in out, out


def test_device_without_backend():
    proc = run_python(
        """
        import tvm
        assert tvm.opencl(0).exist is False
        try:
            tvm.runtime.empty((4,), "float32", tvm.opencl(0))
        except RuntimeError as e:
            print(e)
        """,
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    assert "pip install tvm-runtime-opencl" in proc.stdout
