"""The CUDA device API on a real GPU: attributes, memory, copies, pinned memory, streams,
events, target detection, and crafted kernels (compiled with NVRTC) that exercise every scalar
width, 3-D launches and more than 48 KiB of dynamic shared memory.  Skipped without a GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest
from backend_testing.payloads import (
    FLOAT32,
    FLOAT64,
    GRID3_DYN_SHMEM_TAGS,
    HANDLE,
    INT32,
    INT64,
    UINT32,
    Kernel,
)
from cuda_support import cuda_device, load_payload, nvrtc_or_skip, write_cuda_payload

import tvm
import tvm.backend.cuda as hook


@pytest.fixture(scope="module")
def dev():
    return cuda_device(tvm)


@pytest.fixture(scope="module")
def nvrtc(dev):
    return nvrtc_or_skip(int(dev.driver_version) // 1000)


def test_attributes(dev):
    assert dev.exist is True and hook.driver_status() == ""
    assert isinstance(dev.device_name, str) and dev.device_name
    assert re.fullmatch(r"\d+\.\d", dev.compute_version)
    assert dev.warp_size == 32
    assert dev.max_threads_per_block >= 512
    assert dev.max_shared_memory_per_block >= 48 * 1024
    assert dev.multi_processor_count >= 1 and dev.max_clock_rate >= 0
    assert len(dev.max_thread_dimensions) == 3 and dev.max_thread_dimensions[0] >= 512
    assert dev.api_version == 13000 and dev.driver_version >= 11000
    assert dev.total_global_memory > dev.available_global_memory > 0
    assert dev.l2_cache_size_bytes >= 0


def test_detect_target(dev):
    target = hook.detect_target(dev)
    assert target["kind"] == "cuda"
    assert target["arch"] == "sm_" + dev.compute_version.replace(".", "")
    assert target["max_threads_per_block"] == dev.max_threads_per_block
    assert target["thread_warp_size"] == 32 and target["registers_per_block"] > 0
    assert tvm.backend.detect_target_from_device(dev) == target


def test_pinned_host_memory(dev):
    host = tvm.device(3, 0)
    assert host.exist
    pinned = tvm.runtime.empty((1 << 16,), "float32", host)
    x = np.random.default_rng(1).standard_normal(1 << 16).astype("float32")
    pinned.copyfrom(x)
    on_gpu = pinned.copyto(dev)
    back = tvm.runtime.empty((1 << 16,), "float32", host)
    on_gpu.copyto(back)
    dev.sync()
    np.testing.assert_array_equal(back.numpy(), x)


def test_pinned_host_sync_waits_for_the_device_copy(dev):
    # A GPU -> cuda_host copy is asynchronous; a sync of the cuda_host device (not of the GPU)
    # must wait for it.  Read through a raw view of the pinned buffer, which does not sync.
    import ctypes

    host = tvm.device(3, 0)
    n = 64 << 20  # 256 MiB: long enough to still be in flight if nothing waited
    x = np.random.default_rng(2).standard_normal(n).astype("float32")
    on_gpu = tvm.runtime.tensor(x, dev)
    pinned = tvm.runtime.empty((n,), "float32", host)
    raw = np.ctypeslib.as_array((ctypes.c_float * n).from_address(pinned.data_ptr()))
    for stream in (None, dev.create_raw_stream()):
        if stream is not None:
            dev.set_raw_stream(stream)
        try:
            pinned.copyfrom(np.zeros(n, "float32"))
            on_gpu.copyto(pinned)
            tvm.get_global_func("runtime.Device_StreamSync")(host, stream)
            np.testing.assert_array_equal(raw, x)
        finally:
            if stream is not None:
                dev.set_raw_stream(0)
                dev.free_raw_stream(stream)


def test_streams_and_events(dev):
    s1, s2 = dev.create_raw_stream(), dev.create_raw_stream()
    try:
        x = np.arange(1 << 20, dtype="float32")
        dev.set_raw_stream(s1)
        a = tvm.runtime.tensor(x, dev)
        b = tvm.runtime.empty(x.shape, "float32", dev)
        start, end = hook.Event(dev), hook.Event(dev)
        start.record(s1)
        a.copyto(b)
        end.record(s1)
        tvm.get_global_func("runtime.Device_StreamSyncFromTo")(dev, s1, s2)
        dev.sync(s2)
        assert start.elapsed_time(end) >= 0
        np.testing.assert_array_equal(b.numpy(), x)
    finally:
        dev.set_raw_stream(0)
        dev.free_raw_stream(s1)
        dev.free_raw_stream(s2)


def test_peer_copy_between_gpus(dev):
    if not tvm.cuda(1).exist:
        pytest.skip("needs two CUDA devices")
    x = np.arange(4096, dtype="float32")
    b = tvm.runtime.tensor(x, dev).copyto(tvm.cuda(1))
    np.testing.assert_array_equal(b.numpy(), x)


# ------------------------------------------------------------------------ crafted kernels

SCALARS = """
extern "C" __global__ void scalars(long long* oi, double* of, int a, long long b, unsigned int c,
                                   float d, double e) {
  oi[0] = a; oi[1] = b; oi[2] = c; of[0] = d; of[1] = e;
}
extern "C" __global__ void grid3(int* out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  int nx = gridDim.x * blockDim.x, ny = gridDim.y * blockDim.y;
  out[(z * ny + y) * nx + x] = x * 10000 + y * 100 + z;
}
extern "C" __global__ void big_smem(float* out, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
extern "C" __global__ void maybe(int* out, int* unused) { out[0] = unused == 0 ? 7 : 8; }
"""

CRAFTED = [
    Kernel("scalars", [HANDLE, HANDLE, INT32, INT64, UINT32, FLOAT32, FLOAT64]),
    Kernel("grid3", [HANDLE], GRID3_DYN_SHMEM_TAGS),
    Kernel("big_smem", [HANDLE, INT32], ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"]),
    Kernel("maybe", [HANDLE, HANDLE]),
]


@pytest.fixture(scope="module")
def crafted(nvrtc):
    return load_payload(write_cuda_payload(CRAFTED, SCALARS))


def test_scalar_widths_follow_arg_types(dev, crafted):
    oi = tvm.runtime.empty((3,), "int64", dev)
    of = tvm.runtime.empty((2,), "float64", dev)
    crafted["scalars"](oi, of, -5, 2**40 + 3, 2**32 - 1, 1.5, 1e300, 1, 1)
    assert oi.numpy().tolist() == [-5, 2**40 + 3, 2**32 - 1]
    assert of.numpy().tolist() == [1.5, 1e300]


def test_three_dimensional_launch(dev, crafted):
    grid, block = (3, 2, 2), (4, 5, 1)
    gx, gy, gz = (g * b for g, b in zip(grid, block))
    out = tvm.runtime.empty((gz, gy, gx), "int32", dev)
    crafted["grid3"](out, *grid, *block, 0)
    z, y, x = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    np.testing.assert_array_equal(out.numpy(), x * 10000 + y * 100 + z)


def test_more_than_48k_dynamic_shared_memory(dev, crafted):
    prop = tvm.get_global_func("runtime.GetDeviceTargetProperty")
    optin = int(prop(dev, "max_shared_memory_per_block_optin"))
    n = min(optin, 96 * 1024) // 4
    if n * 4 <= 48 * 1024:
        pytest.skip(f"this GPU allows only {optin} bytes of shared memory per block")
    out = tvm.runtime.empty((n,), "float32", dev)
    crafted["big_smem"](out, n, 1, 256, n * 4)
    np.testing.assert_array_equal(out.numpy(), np.arange(n, dtype="float32")[::-1])


def test_null_buffer_argument(dev, crafted):
    out = tvm.runtime.empty((1,), "int32", dev)
    crafted["maybe"](out, None, 1, 1)
    assert out.numpy().tolist() == [7]


def test_launch_error_is_reported(dev, crafted):
    out = tvm.runtime.empty((1,), "int32", dev)
    with pytest.raises(RuntimeError, match="launch of CUDA kernel 'maybe'.*block \\(4096, 1, 1\\)"):
        crafted["maybe"](out, None, 1, 4096)
