"""Errors raised in C++ reach Python whole: kind, message and the C++ frames.

The core and the backends throw tvm::ffi::Error with a backtrace; at every C boundary (the
device-API tables every device goes through, the CPU included) tvm-ffi's safe-call machinery
carries the error object across, and tvm-ffi turns its backtrace into Python traceback entries.
These tests pin that a failure deep in C++ shows the source line that raised it, with the exact
message users have always seen, and that the ABI rule exported for non-C loaders behaves.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import numpy as np
import pytest
from backend_testing.tracebacks import cxx_frames

import tvm
from tvm import _core


def test_core_error_inside_device_table_call_keeps_its_backtrace():
    # CPU tensors are allocated through the CPU's device-API table like any backend's, so the
    # error crosses the table's C boundary (GuardCall) and is rethrown by the core (ThrowRaised).
    nbytes = 1 << 60
    with pytest.raises(RuntimeError) as info:
        tvm.runtime.empty((nbytes,), "int8")
    assert str(info.value) == f"CPU allocation of {nbytes} bytes failed (out of memory)"
    assert ("cpu_device.cc", "AllocData") in cxx_frames(info.value)
    # tvm-ffi keeps the original error object on the exception, backtrace included.
    ffi_error = info.value.__tvm_ffi_error__
    assert ffi_error.kind == "RuntimeError"
    assert "cpu_device.cc" in ffi_error.backtrace


def test_core_error_in_global_function_keeps_kind_message_and_frame():
    t = tvm.runtime.tensor(np.arange(16, dtype="int32"))
    with pytest.raises(ValueError) as info:
        t._create_view((20,), "int32")
    assert str(info.value) == "view of 80 bytes at offset 0 does not fit in a tensor of 64 bytes"
    assert ("tensor_ops.cc", "CreateView") in cxx_frames(info.value)


def test_error_is_reported_again_with_the_same_text():
    # The error object is moved out of tvm-ffi's thread-local slot, never left behind: a second
    # failure is reported on its own, and a success in between is not disturbed.
    for _ in range(3):
        with pytest.raises(RuntimeError, match=r"^CPU allocation of \d+ bytes failed"):
            tvm.runtime.empty((1 << 60,), "int8")
        assert tvm.runtime.empty((4,), "float32").shape == (4,)


# ---------------------------------------------------------------------------- the ABI rule


def _check_backend_abi():
    fn = _core.LIB.TVMRuntimeCheckBackendABI
    fn.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def _abi(major: int, minor: int) -> int:
    return (major << 16) | minor


def test_check_backend_abi_accepts_same_major_and_older_or_equal_minor():
    check = _check_backend_abi()
    core = _core.ABI_VERSION
    major, minor = core >> 16, core & 0xFFFF
    err = ctypes.create_string_buffer(256)
    for required in {_abi(major, 0), _abi(major, minor)}:
        assert check(required, err, len(err)) == 0
        assert err.value == b""  # nothing written on success


@pytest.mark.parametrize("delta", ["newer minor", "older major", "newer major"])
def test_check_backend_abi_rejects_with_both_versions(delta):
    check = _check_backend_abi()
    core = _core.ABI_VERSION
    major, minor = core >> 16, core & 0xFFFF
    required = {
        "newer minor": _abi(major, minor + 1),
        "older major": _abi(major - 1, 7),
        "newer major": _abi(major + 1, 0),
    }[delta]
    err = ctypes.create_string_buffer(256)
    assert check(required, err, len(err)) == 1
    assert err.value.decode() == (
        f"built for core ABI {required >> 16}.{required & 0xFFFF}, "
        f"but the loaded tvm-runtime core provides ABI {major}.{minor}"
    )


def test_check_backend_abi_truncates_and_terminates():
    check = _check_backend_abi()
    required = _abi((_core.ABI_VERSION >> 16) + 1, 0)
    err = ctypes.create_string_buffer(b"\xff" * 16, 16)
    assert check(required, err, 10) == 1
    assert err.raw[:10] == b"built for\x00"  # 9 characters and the NUL, nothing past err_len
    assert err.raw[10:] == b"\xff" * 6
    # No buffer at all is allowed: the verdict alone.
    assert check(required, None, 0) == 1
    assert check(_core.ABI_VERSION, None, 0) == 0


def test_installed_header_declares_the_abi_the_core_reports():
    # Backends are compiled against the header the core wheel ships; its version and the core's
    # must agree, and the Python-facing helper must apply the same rule as the C export.
    header = (Path(tvm.__file__).parent / "include" / "tvm_runtime" / "c_api.h").read_text()
    major = int(re.search(r"#define TVM_RUNTIME_ABI_VERSION_MAJOR (\d+)", header).group(1))
    minor = int(re.search(r"#define TVM_RUNTIME_ABI_VERSION_MINOR (\d+)", header).group(1))
    assert _core.ABI_VERSION == _abi(major, minor)
    assert "TVMRuntimeCheckBackendABI" in header
    assert _core.check_backend_abi(_abi(major, minor)) == ""
    assert "provides ABI" in _core.check_backend_abi(_abi(major + 1, 0))
