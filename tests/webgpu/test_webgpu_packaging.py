"""The installed tvm-runtime-webgpu distribution: what it ships, and that wgpu-native stays lazy."""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

from backend_testing.elf import exported_symbols
from backend_testing.packaging import (
    check_entry_point,
    check_links_no_vendor_library,
    check_ships_only_its_namespace_portion,
)

import tvm.backend.webgpu as hook


def test_ships_only_its_namespace_portion():
    check_ships_only_its_namespace_portion("webgpu")


def test_entry_point():
    check_entry_point("webgpu")
    assert hook.BACKEND.served_device_types == (15,)


def test_dso_does_not_link_wgpu_native():
    so = Path(hook.__file__).parent / "libtvm_runtime_webgpu.so"
    check_links_no_vendor_library(so, ("wgpu",))
    exported = exported_symbols(so)
    assert exported == {"TVMRuntimeBackendABIVersion", "TVMRuntimeBackendRegister"}, exported


def test_wgpu_extra_pins_the_c_api_release():
    reqs = md.distribution("tvm-runtime-webgpu").requires or []
    (wgpu,) = [r for r in reqs if r.startswith("wgpu")]
    assert ">=0.32" in wgpu and "<0.33" in wgpu and 'extra == "wgpu"' in wgpu


def test_library_found_where_the_wgpu_package_ships_it():
    candidates = hook.library_candidates()
    try:
        spec_dir = Path(md.distribution("wgpu").locate_file("wgpu/resources"))
    except md.PackageNotFoundError:
        assert candidates == [] or all("wgpu" not in c for c in candidates)
        return
    assert any(Path(c).parent == spec_dir for c in candidates), candidates
