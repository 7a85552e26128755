"""The installed tvm-runtime-vulkan distribution: what it ships, and that Vulkan stays lazy."""

from __future__ import annotations

from pathlib import Path

from backend_testing.elf import exported_symbols
from backend_testing.packaging import (
    check_entry_point,
    check_links_no_vendor_library,
    check_ships_only_its_namespace_portion,
)

import tvm.backend.vulkan as hook


def test_ships_only_its_namespace_portion():
    check_ships_only_its_namespace_portion("vulkan")


def test_entry_point():
    check_entry_point("vulkan")
    assert hook.BACKEND.served_device_types == (7,)


def test_dso_does_not_link_the_vulkan_loader():
    so = Path(hook.__file__).parent / "libtvm_runtime_vulkan.so"
    check_links_no_vendor_library(so, ("vulkan",))
    # Only the two C entry points are exported: no C++ symbol crosses the wheel boundary.
    exported = exported_symbols(so)
    assert exported == {"TVMRuntimeBackendABIVersion", "TVMRuntimeBackendRegister"}, exported
