"""The installed tvm-runtime-opencl distribution: what it ships, and that OpenCL stays lazy."""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

from ocl_support import needed_libraries

import tvm.backend.opencl as hook
from conftest import run_python


def test_ships_only_its_namespace_portion():
    dist = md.distribution("tvm-runtime-opencl")
    files = [str(f) for f in dist.files or []]
    payload = [f for f in files if ".dist-info/" not in f]
    assert "tvm/backend/opencl/__init__.py" in payload
    assert "tvm/backend/opencl/libtvm_runtime_opencl.so" in payload
    assert all(f.startswith("tvm/backend/opencl/") for f in payload), payload
    assert any(r.startswith("tvm-runtime") and "<0.2" in r for r in dist.requires or [])


def test_entry_point():
    (ep,) = [e for e in md.entry_points(group="tvm.backends") if e.name == "opencl"]
    assert ep.value == "tvm.backend.opencl"
    assert hook.DEVICE_TYPES == (4,)


def test_dso_does_not_link_an_icd_loader():
    so = Path(hook.__file__).parent / "libtvm_runtime_opencl.so"
    needed = needed_libraries(str(so))
    assert "libtvm_runtime.so" in needed
    assert not [n for n in needed if "OpenCL" in n], needed


def test_icd_loader_is_opened_only_on_first_device_use():
    proc = run_python(
        """
        def mapped():
            return "libOpenCL" in open("/proc/self/maps").read()
        import tvm, tvm.backend.opencl
        from tvm.backend import _dso
        assert "opencl" in _dso.LOADED, "backend registered at import"
        print("after import:", mapped())
        tvm.opencl(0).exist
        print("after first use:", mapped())
        """
    )
    assert "after import: False" in proc.stdout
    assert "after first use:" in proc.stdout
