"""The installed tvm-runtime-rocm distribution: what it ships, its declaration in the release
train, and that no ROCm library is linked or opened before a device is used."""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

from backend_testing.no_driver import vendor_library_mapping
from backend_testing.packaging import (
    check_entry_point,
    check_links_no_vendor_library,
    check_ships_only_its_namespace_portion,
)
from rocm_support import artifact

import tvm.backend.rocm as hook

DSO = Path(hook.__file__).parent / "libtvm_runtime_rocm.so"


def test_ships_only_its_namespace_portion():
    check_ships_only_its_namespace_portion("rocm")


def test_wheel_is_py3_none_and_needs_no_rocm_wheel():
    wheel = md.distribution("tvm-runtime-rocm").read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    assert tags and all(t.startswith("py3-none-") for t in tags), tags
    requires = md.distribution("tvm-runtime-rocm").requires or []
    assert [r for r in requires if not r.startswith("tvm-runtime")] == [], requires


def test_core_extras_include_rocm():
    requires = md.distribution("tvm-runtime").requires or []
    assert any(r.startswith("tvm-runtime-rocm==") and 'extra == "rocm"' in r for r in requires)
    assert any(r.startswith("tvm-runtime-rocm==") and 'extra == "all"' in r for r in requires)


def test_entry_point():
    check_entry_point("rocm")
    assert hook.BACKEND.served_device_types == (10, 11)
    assert callable(hook.register_backend) and callable(hook.detect_target)


def test_dso_links_no_rocm_library():
    check_links_no_vendor_library(DSO, ("amdhip", "hsa", "rocm"))


def test_no_rocm_library_opened_before_device_use():
    out = vendor_library_mapping(
        "rocm", "libamdhip64", f"tvm.runtime.load_module({artifact('add')!r}); tvm.rocm(0).exist"
    )
    # Loading an artifact is lazy; asking whether a device exists searches for the runtime.
    assert "after import: False" in out
