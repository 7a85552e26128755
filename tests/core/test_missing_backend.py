"""Artifacts that need a backend that is not loaded name the wheel to install."""

from __future__ import annotations

from conftest import ARTIFACTS, run_python


def test_opencl_artifact_without_backend_names_the_wheel():
    proc = run_python(
        f"""
        import tvm
        try:
            tvm.runtime.load_module({str(ARTIFACTS / "opencl" / "add.so")!r})
        except RuntimeError as e:
            print(e)
        """,
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    assert "'opencl'" in proc.stdout
    assert "pip install tvm-runtime-opencl" in proc.stdout
    assert "not registered" not in proc.stdout


def test_cuda_artifact_without_backend_names_the_wheel():
    proc = run_python(
        f"""
        import tvm
        try:
            tvm.runtime.load_module({str(ARTIFACTS / "cuda" / "add.so")!r})
        except RuntimeError as e:
            print(e)
        """,
        env={"TVM_BACKENDS": "none"},
    )
    assert "pip install tvm-runtime-cuda" in proc.stdout


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
