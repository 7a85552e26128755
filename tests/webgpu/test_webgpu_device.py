"""The WebGPU device: attributes, adapter report, target detection, memory and copies."""

from __future__ import annotations

import numpy as np
import pytest
from webgpu_support import webgpu_device

import tvm
import tvm.backend.webgpu as hook
from conftest import run_module


@pytest.fixture(scope="module")
def dev():
    return webgpu_device(tvm)


def test_device_attributes(dev):
    assert dev.exist
    assert tvm.webgpu(0) == tvm.device("webgpu", 0) == dev
    assert int(dev.dlpack_device_type()) == 15
    info = hook.adapter_info(dev)
    assert info["backend"] in {"Vulkan", "Metal", "D3D12", "OpenGL", "OpenGLES"}
    assert info["adapter"] in dev.device_name and info["backend"] in dev.device_name
    assert dev.max_threads_per_block == info["max_compute_invocations_per_workgroup"] > 0
    assert dev.max_shared_memory_per_block == info["max_compute_workgroup_storage_size"] > 0
    assert list(dev.max_thread_dimensions)[0] == info["max_compute_workgroup_size_x"]
    assert dev.warp_size == 1
    assert info["wgpu_native_version"].startswith("29.")
    assert info["wgpu_native_library"]
    assert not tvm.webgpu(99).exist


def test_detect_target(dev):
    target = hook.detect_target(dev)
    assert target["kind"] == "webgpu"
    assert target["max_num_threads"] <= dev.max_threads_per_block
    assert target["max_shared_memory_per_block"] == dev.max_shared_memory_per_block
    from tvm.target.detect_target import detect_target_from_device

    assert detect_target_from_device(dev) == target
    prop = tvm.get_global_func("runtime.GetDeviceTargetProperty")
    assert prop(dev, "supports_float16") == hook.adapter_info(dev)["shader_f16"]
    assert prop(dev, "no_such_property") is None


def test_diagnostics_show_adapter_and_target(dev):
    out = run_module("tvm.backend").stdout
    line = [ln for ln in out.splitlines() if ln.strip().startswith("webgpu:0")]
    assert line, out
    assert hook.adapter_info(dev)["backend"] in line[0] and "target: webgpu" in line[0]


def test_odd_sizes_and_offsets(dev):
    # WebGPU copies only whole 4-byte words: odd byte counts and offsets must still be exact.
    for n in (1, 3, 5, 7, 1001):
        x = (np.arange(n) % 251).astype("uint8")
        t = tvm.runtime.tensor(x, dev)
        np.testing.assert_array_equal(t.numpy(), x)
    x = np.arange(13, dtype="uint8")
    t = tvm.runtime.tensor(x, dev)
    t._create_view((3,), "uint8", 5).copyfrom(np.array([200, 201, 202], "uint8"))
    expected = x.copy()
    expected[5:8] = [200, 201, 202]
    np.testing.assert_array_equal(t.numpy(), expected)
    np.testing.assert_array_equal(t._create_view((5,), "uint8", 3).numpy(), expected[3:8])
    # device -> device within one buffer and at odd offsets
    t._create_view((4,), "uint8", 1).copyto(t._create_view((4,), "uint8", 9))
    expected[9:13] = expected[1:5]
    np.testing.assert_array_equal(t.numpy(), expected)


def test_buffers_are_released(dev):
    before = hook.device_stats(dev)
    ts = [tvm.runtime.empty((1000,), "float32", dev) for _ in range(10)]
    during = hook.device_stats(dev)
    del ts
    after = hook.device_stats(dev)
    assert during["live_buffers"] >= before["live_buffers"] + 10
    assert after["live_buffers"] <= during["live_buffers"] - 10


def test_too_large_allocation_is_a_clear_error(dev):
    limit = hook.adapter_info(dev)["max_buffer_size"]
    with pytest.raises(ValueError, match="its largest buffer is"):
        tvm.runtime.empty((limit + 4,), "uint8", dev)
