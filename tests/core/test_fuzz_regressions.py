"""Inputs the fuzzers (fuzz/, `nox -s fuzz`) found, fed to the public Python API.

Each was a crash or an unclear error before its fix; now it must be a ValueError that says what
is wrong.  Raw inputs the fuzzer wrote are kept in tests/artifacts/fuzz/<target>/; container
corruptions are rebuilt here from a real artifact so the test reads as what it checks.
"""

from __future__ import annotations

import re
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi
from backend_testing.elf import find_symbol
from backend_testing.payloads import LIBRARY_BIN

import tvm
from conftest import ARTIFACTS

FINDINGS = ARTIFACTS / "fuzz"


def test_params_empty_tensor_with_overflowing_dims_is_rejected():
    # fuzz target `params`: a record of shape (4, ~2^57, 0, ...) and 0 bytes passes the byte-size
    # check (the product is 0), but the tensor's strides overflow int64 (UBSan: signed overflow
    # in the stride computation).  The allocation now checks the non-zero dimensions too.
    blob = (FINDINGS / "params" / "empty_tensor_with_overflowing_dims.bin").read_bytes()
    with pytest.raises(ValueError, match=r"a tensor of shape \(4, 216172782113783811, 0, .*is too large"):
        tvm.runtime.load_param_dict(blob)


def test_params_valid_empty_tensor_still_round_trips():
    params = {"empty": tvm.runtime.tensor(np.zeros((3, 0, 5), "float32"))}
    back = tvm.runtime.load_param_dict(tvm.runtime.save_param_dict(params))
    assert back["empty"].shape == (3, 0, 5)


def _run_like_the_vm_fuzz_target(blob: bytes) -> list[str]:
    """What fuzz/fuzz_vm_executable.cc does with an input, through the Python API: load it, import
    the real CPU models' kernels, call every VM function with zero tensors shaped like the models'
    inputs.  Returns the clear errors raised (any other exception propagates)."""
    executable = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.relax.VMExecutable")(blob)
    for model in ("mlp_cpu", "mlp_dyn_cpu", "convnet_cpu"):
        executable.import_module(tvm.runtime.load_module(ARTIFACTS / "relax" / f"{model}.so").imports[0])
    vm = tvm.runtime.vm.VirtualMachine(executable, tvm.cpu())
    mlp_shapes = [(4, 16), (16, 32), (32,), (32, 8), (8,)]
    errors = []
    for name, num_args in re.findall(r"@([^\s(]+)\(.*\): VM function, (\d+) args", executable["as_text"]()):
        shapes = {5: mlp_shapes, 1: [(1, 3, 8, 8)]}.get(int(num_args), [(4, 16)] * int(num_args))
        try:
            vm[name](*[tvm.runtime.tensor(np.zeros(shape, "float32")) for shape in shapes])
        except (ValueError, TypeError, IndexError, RuntimeError) as err:  # the harness's clear kinds
            errors.append(str(err))
    return errors


def test_vm_alloc_tensor_with_overflowing_shape_is_rejected():
    # fuzz target `vm_executable`: a corrupted shape constant made vm.builtin.alloc_tensor
    # multiply dimensions past int64 (UBSan: signed overflow in StorageObj::AllocTensor); a
    # wrapped size could also have passed the storage bounds check.
    blob = (FINDINGS / "vm_executable" / "alloc_tensor_shape_overflow.bin").read_bytes()
    errors = _run_like_the_vm_fuzz_target(blob)
    assert any("alloc_tensor: the shape's size does not fit in 64 bits" in e for e in errors), errors


# ------------------------------------------------------------------- the library-bin container


def _container_copy(tmp_path: Path, patch) -> Path:
    """A copy of a real OpenCL artifact whose `__tvm_ffi__library_bin` went through `patch`.

    Its container is: u64 nbytes; vec<u64> indptr [0, 1, 1]; vec<u64> children [1]; "_lib";
    "opencl" + payload (tvm-0.27-abi.md, 3.2).  `patch(bytearray, start, symbol_size)` edits it
    in place, keeping the file's size."""
    src = ARTIFACTS / "opencl" / "add.so"
    data = bytearray(src.read_bytes())
    start, size = find_symbol(bytes(data), LIBRARY_BIN)
    patch(data, start, size)
    dst = tmp_path / "add.so"
    dst.write_bytes(bytes(data))
    return dst


def _put_u64(data: bytearray, at: int, value: int) -> None:
    struct.pack_into("<Q", data, at, value)


INDPTR = 8  # offset of the indptr count from the symbol start; entries follow
CHILDREN = INDPTR + 8 + 3 * 8  # the children count; its one entry follows
OPENCL_PAYLOAD = CHILDREN + 16 + (8 + 4) + (8 + 6)  # after the child, "_lib" and "opencl"


CORRUPTIONS = {
    # Found by the `library_bin` fuzz target: tvm-ffi's parser raised "InternalError: Check
    # failed: (stream.Read(&import_tree_indptr)) is false" naming no file.
    "empty container": (lambda d, s, n: _put_u64(d, s, 0), r"need 8 bytes for a scalar"),
    # Found by the same target once the check was in: tvm-ffi cannot read a zero-length payload
    # ("Check failed: (stream.Read(&module_bytes))").
    "empty payload": (
        lambda d, s, n: _put_u64(d, s + OPENCL_PAYLOAD, 0),
        r"module 1 \('opencl'\) has an empty payload",
    ),
    # The cases below are out-of-bounds reads in tvm-ffi 0.1.15's parser (found while fixing
    # the first one, reading it): without the core's check they crash or read garbage.
    "size past the symbol": (lambda d, s, n: _put_u64(d, s, n), r"its size field says \d+ bytes"),
    "row past the child list": (
        lambda d, s, n: (_put_u64(d, s + INDPTR + 16, 1000), _put_u64(d, s + INDPTR + 24, 1000)),
        r"import-tree row 0 points outside the child list",
    ),
    "child index past the modules": (
        lambda d, s, n: _put_u64(d, s + CHILDREN + 8, 1 << 40),
        r"module 0 imports module 1099511627776 of 2",
    ),
    "module importing itself": (
        lambda d, s, n: _put_u64(d, s + CHILDREN + 8, 0),
        r"module 0 imports module 0 of 2",
    ),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corrupted_library_bin_is_a_value_error_naming_the_file(tmp_path, name):
    patch, expected = CORRUPTIONS[name]
    path = _container_copy(tmp_path, patch)
    with pytest.raises(ValueError, match=expected) as info:
        tvm.runtime.load_module(path)
    assert f"__tvm_ffi__library_bin of '{path}'" in str(info.value)


def test_untouched_copy_still_loads(tmp_path):
    path = tmp_path / "add.so"
    shutil.copyfile(ARTIFACTS / "opencl" / "add.so", path)
    assert tvm.runtime.load_module(path).imports[0].kind == "opencl"
