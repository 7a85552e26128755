"""The installed tvm-runtime-vulkan distribution: what it ships, and that Vulkan stays lazy."""

from __future__ import annotations

import importlib.metadata as md
import shutil
import subprocess
from pathlib import Path

import pytest

import tvm.backend.vulkan as hook


def test_ships_only_its_namespace_portion():
    dist = md.distribution("tvm-runtime-vulkan")
    files = [str(f) for f in dist.files or []]
    payload = [f for f in files if ".dist-info/" not in f]
    assert "tvm/backend/vulkan/__init__.py" in payload
    assert "tvm/backend/vulkan/libtvm_runtime_vulkan.so" in payload
    assert all(f.startswith("tvm/backend/vulkan/") for f in payload), payload
    assert any(r.startswith("tvm-runtime") and "<0.2" in r for r in dist.requires or [])


def test_entry_point():
    (ep,) = [e for e in md.entry_points(group="tvm.backends") if e.name == "vulkan"]
    assert ep.value == "tvm.backend.vulkan"
    assert hook.DEVICE_TYPES == (7,)


@pytest.mark.skipif(shutil.which("readelf") is None, reason="no readelf (binutils)")
def test_dso_does_not_link_the_vulkan_loader():
    so = Path(hook.__file__).parent / "libtvm_runtime_vulkan.so"
    out = subprocess.run(
        ["readelf", "-d", "--dyn-syms", "-W", str(so)], capture_output=True, text=True, check=True
    )
    needed = [line.split("[")[1].rstrip("]") for line in out.stdout.splitlines() if "(NEEDED)" in line]
    assert "libtvm_runtime.so" in needed
    assert not [n for n in needed if "vulkan" in n], needed
    # Only the two C entry points are exported: no C++ symbol crosses the wheel boundary.
    exported = {
        line.split()[-1]
        for line in out.stdout.splitlines()
        if " GLOBAL " in line
        and " DEFAULT " in line
        and " UND " not in line
        and line.split()[-1].isidentifier()
    }
    assert exported == {"TVMRuntimeBackendABIVersion", "TVMRuntimeBackendRegister"}, exported
