"""The installed tvm-runtime-opencl distribution: what it ships, and that OpenCL stays lazy."""

from __future__ import annotations

from pathlib import Path

from backend_testing.no_driver import vendor_library_mapping
from backend_testing.packaging import (
    check_entry_point,
    check_links_no_vendor_library,
    check_ships_only_its_namespace_portion,
)

import tvm.backend.opencl as hook


def test_ships_only_its_namespace_portion():
    check_ships_only_its_namespace_portion("opencl")


def test_entry_point():
    check_entry_point("opencl")
    assert hook.BACKEND.served_device_types == (4,)


def test_dso_does_not_link_an_icd_loader():
    check_links_no_vendor_library(Path(hook.__file__).parent / "libtvm_runtime_opencl.so", ("OpenCL",))


def test_icd_loader_is_opened_only_on_first_device_use():
    out = vendor_library_mapping("opencl", "libOpenCL", "tvm.opencl(0).exist")
    assert "after import: False" in out
    assert "after first use:" in out
