"""Errors raised in the Vulkan backend reach Python whole: the exact message and the C++ frame
that raised it, through the backend's device-API table (allocation) and through a global
function the backend registers (target properties).  Runs on a real driver (lavapipe in CI)."""

from __future__ import annotations

import pytest
from backend_testing.tracebacks import cxx_frames
from vk_support import target_property, vulkan_device

import tvm


@pytest.fixture()
def dev():
    return vulkan_device(tvm)


def _expected_missing_device_message() -> str:
    count = sum(1 for i in range(64) if tvm.vulkan(i).exist)
    return f"Vulkan device 63 does not exist; this machine has {count} Vulkan device(s)"


def test_missing_device_error_crosses_the_device_table(dev):
    with pytest.raises(ValueError) as info:
        tvm.runtime.empty((4,), "float32", tvm.vulkan(63))
    assert str(info.value) == _expected_missing_device_message()
    assert ("device_info_util.h", "ThrowMissingDevice") in cxx_frames(info.value)
    assert info.value.__tvm_ffi_error__.kind == "ValueError"


def test_missing_device_error_from_a_backend_global(dev):
    with pytest.raises(ValueError) as info:
        target_property(tvm.vulkan(63), "supports_float16")
    assert str(info.value) == _expected_missing_device_message()
    assert ("device_info_util.h", "ThrowMissingDevice") in cxx_frames(info.value)
