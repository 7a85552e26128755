"""Artifacts that need a backend that is not loaded name the wheel to install."""

from __future__ import annotations

from conftest import ARTIFACTS, run_python


def _load_error(artifact: str, env: dict[str, str]) -> str:
    """What loading ``artifact`` in a fresh interpreter with ``env`` raises (RuntimeError text)."""
    proc = run_python(
        f"""
        import tvm
        try:
            tvm.runtime.load_module({str(ARTIFACTS / artifact)!r})
        except RuntimeError as e:
            print(e)
        """,
        env=env,
    )
    return proc.stdout


def test_opencl_artifact_without_backend_names_the_wheel():
    out = _load_error("opencl/add.so", {"TVM_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert "'opencl'" in out
    assert "pip install tvm-runtime-opencl" in out
    assert "not registered" not in out


def test_cuda_artifact_without_backend_names_the_wheel():
    out = _load_error("cuda/add.so", {"TVM_BACKENDS": "none"})
    assert "pip install tvm-runtime-cuda" in out


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
