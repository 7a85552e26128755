"""The installed tvm-runtime-cuda distribution, beyond what tests/conformance checks of every
backend: its NVRTC extras, and that no CUDA library is opened by loading an artifact."""

from __future__ import annotations

import importlib.metadata as md

import tvm.backend.cuda as hook
from conftest import ARTIFACTS, run_python


def test_nvrtc_extras():
    meta = md.distribution("tvm-runtime-cuda").metadata
    assert {"nvrtc", "nvrtc-cu12"} <= set(meta.get_all("Provides-Extra") or [])
    requires = md.distribution("tvm-runtime-cuda").requires or []
    nvrtc = [r for r in requires if 'extra == "nvrtc"' in r]
    assert any(r.startswith("nvidia-cuda-nvrtc") and ">=13.3" in r for r in nvrtc), nvrtc
    assert any(r.startswith("cuda-pathfinder") for r in nvrtc), nvrtc
    cu12 = [r for r in requires if 'extra == "nvrtc-cu12"' in r]
    assert any(r.startswith("nvidia-cuda-nvrtc-cu12") for r in cu12), cu12
    # Plain installs pull no CUDA wheel: the driver comes from the system.
    assert not [r for r in requires if "extra ==" not in r and r.startswith(("nvidia", "cuda"))]


def test_hook_serves_device_and_pinned_memory():
    # Of the declared kDLCUDA, kDLCUDAHost and kDLCUDAManaged (tests/conformance checks the rest).
    assert hook.BACKEND.served_device_types == (2, 3)
    assert callable(hook.register_backend) and callable(hook.detect_target)


def test_no_cuda_library_opened_before_device_use():
    proc = run_python(
        f"""
        def mapped():
            maps = open("/proc/self/maps").read()
            return any(n in maps for n in ("libcuda", "libnvrtc", "libcudart"))
        import tvm, tvm.backend.cuda
        from tvm.backend import _dso
        assert "cuda" in _dso.LOADED, "backend registered at import"
        mod = tvm.runtime.load_module({str(ARTIFACTS / "cuda" / "add.so")!r})
        print("after import and load:", mapped())
        """
    )
    assert "after import and load: False" in proc.stdout
