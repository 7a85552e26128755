"""The `opencl` module loader on crafted apache-tvm 0.27 payloads: scalar widths per arg_types,
launch tags (2-D/3-D grids, tirx.use_dyn_shared_memory), source splitting."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi
from backend_testing import payloads
from backend_testing.payloads import FLOAT32, FLOAT64, HANDLE, INT32, INT64, UINT32, Kernel
from ocl_support import opencl_device, write_opencl_payload

import tvm


@pytest.fixture(scope="module")
def dev():
    return opencl_device(tvm)


def load(kernels, code):
    return tvm_ffi.get_global_func("ffi.Module.load_from_bytes.opencl")(write_opencl_payload(kernels, code))


def supports(dev, what):
    return bool(tvm.get_global_func("runtime.GetDeviceTargetProperty")(dev, what))


def test_scalar_widths_follow_arg_types(dev):
    fp64 = supports(dev, "supports_float64")
    double = "double" if fp64 else "float"
    code = f"""// Function: scalars
__kernel void scalars(__global long* oi, __global {double}* of, int a, long b, uint c, float d,
                      {double} e) {{
  oi[0] = a; oi[1] = b; oi[2] = c; of[0] = d; of[1] = e;
}}
"""
    types = [HANDLE, HANDLE, INT32, INT64, UINT32, FLOAT32, FLOAT64 if fp64 else FLOAT32]
    mod = load([Kernel("scalars", types)], code)
    oi = tvm.runtime.empty((3,), "int64", dev)
    of = tvm.runtime.empty((2,), "float64" if fp64 else "float32", dev)
    e = 1e300 if fp64 else 0.25
    mod["scalars"](oi, of, -5, 2**40 + 3, 2**32 - 1, 1.5, e, 1, 1)
    assert oi.numpy().tolist() == [-5, 2**40 + 3, 2**32 - 1]
    assert of.numpy().tolist() == [1.5, e]


def test_multi_dimensional_launch_and_dyn_shared_memory_tag(dev):
    code = """// Function: grid
__kernel void grid(__global int* out) {
  int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  out[(z * get_global_size(1) + y) * get_global_size(0) + x] = x * 10000 + y * 100 + z;
}
"""
    mod = load([Kernel("grid", [HANDLE], payloads.GRID3_DYN_SHMEM_TAGS)], code)
    grid, block = (3, 2, 2), (4, 5, 1)
    gx, gy, gz = (g * b for g, b in zip(grid, block))
    out = tvm.runtime.empty((gz, gy, gx), "int32", dev)
    mod["grid"](out, *grid, *block, 1024)  # the dynamic shared memory size is consumed
    z, y, x = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    np.testing.assert_array_equal(out.numpy(), x * 10000 + y * 100 + z)


def test_work_dim_follows_highest_axis_used(dev):
    # Only y axes tagged: work_dim is 2 and the x extent stays 1.
    code = """// Function: only_y
__kernel void only_y(__global int* out) {
  out[get_global_id(1)] = get_work_dim() * 100 + get_global_size(0);
}
"""
    mod = load([Kernel("only_y", [HANDLE], ["blockIdx.y", "threadIdx.y"])], code)
    out = tvm.runtime.empty((8,), "int32", dev)
    mod["only_y"](out, 2, 4)
    assert out.numpy().tolist() == [201] * 8


def test_preamble_before_first_kernel_is_shared(dev):
    code = """#define SCALE 3
// Function: first
__kernel void first(__global int* o) { o[get_global_id(0)] = SCALE; }
// Function: second
__kernel void second(__global int* o) { o[get_global_id(0)] = 2 * SCALE; }
"""
    mod = load([Kernel("first", [HANDLE]), Kernel("second", [HANDLE])], code)
    out = tvm.runtime.empty((4,), "int32", dev)
    mod["first"](out, 1, 4)
    assert out.numpy().tolist() == [3] * 4
    mod["second"](out, 1, 4)
    assert out.numpy().tolist() == [6] * 4


def test_null_buffer_argument(dev):
    code = """// Function: maybe
__kernel void maybe(__global int* o, __global int* unused) { o[0] = unused == 0 ? 7 : 8; }
"""
    mod = load([Kernel("maybe", [HANDLE, HANDLE])], code)
    out = tvm.runtime.empty((1,), "int32", dev)
    mod["maybe"](out, None, 1, 1)
    assert out.numpy().tolist() == [7]
