"""The Vulkan device API: attributes, target properties and detection, the memory sub-allocator,
copies (direct-mapped and staged), batching and synchronization, descriptor binding without
push descriptors, time_evaluator, and the diagnostics command."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
import tvm_ffi
from backend_testing.runners import (
    check_copies_honour_byte_offsets,
)
from vk_support import VK_ARTIFACTS, load_payload, payload_of, target_property, vulkan_device

import tvm
from conftest import run_module
from tvm.backend import vulkan as hook


@pytest.fixture(scope="module")
def dev():
    return vulkan_device(tvm)


def test_attributes(dev):
    # What every device reports: tests/conformance/test_device.py.
    assert dev.max_threads_per_block >= 128
    assert dev.warp_size >= 1
    assert dev.max_shared_memory_per_block >= 16384
    assert re.fullmatch(r"\d+\.\d+\.\d+", dev.compute_version)
    assert dev.api_version >= 200  # VK_HEADER_VERSION the declarations follow
    assert re.fullmatch(r"\d+\.\d+\.\d+", dev.driver_version)
    assert dev.total_global_memory > 0
    assert dev.max_clock_rate is None and dev.multi_processor_count is None


# Target properties apache-tvm's Vulkan target kind declares as bool.
BOOL_PROPERTIES = (
    "supports_float16",
    "supports_int8",
    "supports_int16",
    "supports_int64",
    "supports_16bit_buffer",
)


def test_target_properties(dev):
    get = tvm_ffi.get_global_func("device_api.vulkan.get_target_property")
    # Types as apache-tvm's target kind declares them.
    for key in BOOL_PROPERTIES:
        assert isinstance(get(dev, key), bool), key
    for key in ("max_num_threads", "thread_warp_size", "max_push_constants_size", "max_storage_buffer_range"):
        assert isinstance(get(dev, key), int), key
    assert get(dev, "supports_float32") is True and get(dev, "supports_int32") is True
    assert get(dev, "max_num_threads") == dev.max_threads_per_block
    assert get(dev, "thread_warp_size") == dev.warp_size
    assert get(dev, "max_shared_memory_per_block") == dev.max_shared_memory_per_block
    assert get(dev, "max_push_constants_size") >= 128
    assert get(dev, "max_uniform_buffer_range") >= 16384
    assert get(dev, "device_name") == dev.device_name
    assert get(dev, "device_type") in ("discrete", "integrated", "virtual", "cpu", "other")
    assert get(dev, "max_spirv_version") >= 0x10000
    assert get(dev, "no_such_property") is None
    # The core's generic global serves the same table.
    assert tvm.get_global_func("runtime.GetDeviceTargetProperty")(dev, "supports_int64") == get(
        dev, "supports_int64"
    )
    with pytest.raises(ValueError, match="does not exist"):
        get(tvm.vulkan(63), "supports_float16")


def test_detect_target(dev):
    target = hook.detect_target(dev)
    assert target["kind"] == "vulkan"
    assert set(target) - {"kind"} == set(hook.TARGET_PROPERTIES)
    assert target["max_num_threads"] == dev.max_threads_per_block
    assert target["thread_warp_size"] == dev.warp_size
    for key in BOOL_PROPERTIES:
        assert target[key] == target_property(dev, key)
    # The core's generic entry point dispatches to the hook.
    assert tvm.backend.detect_target_from_device(dev) == target
    with pytest.raises(ValueError, match="cannot detect"):
        hook.detect_target(tvm.vulkan(63))


def test_lavapipe_reports_its_features(dev):
    if "llvmpipe" not in dev.device_name:
        pytest.skip("lavapipe-specific values")
    target = hook.detect_target(dev)
    assert target["device_type"] == "cpu" and target["driver_name"] == "llvmpipe"
    assert target["supports_float16"] and target["supports_16bit_buffer"] and target["supports_int64"]
    assert target["supports_push_descriptor"]


def test_large_tensors(dev):
    # The copy matrix of every device: tests/conformance/test_device.py.
    big = np.random.default_rng(0).standard_normal(9 << 20).astype("float32")  # 36 MiB: own block
    np.testing.assert_array_equal(tvm.runtime.tensor(big, dev).numpy(), big)


def test_copies_honour_byte_offsets(dev):
    t, expected = check_copies_honour_byte_offsets(tvm, dev)
    # Overlapping views of one tensor (vkCmdCopyBuffer cannot do that directly).
    t._create_view((50,), "float32", 0).copyto(t._create_view((50,), "float32", 20 * 4))
    expected[20:70] = expected[0:50].copy()
    np.testing.assert_array_equal(t.numpy(), expected)


def test_tensors_are_sub_allocated(dev):
    before = hook.device_stats(dev)
    tensors = [tvm.runtime.empty((256,), "float32", dev) for _ in range(500)]
    during = hook.device_stats(dev)
    assert during["live_allocations"] >= before["live_allocations"] + 500
    # 500 tensors cost at most one more vkAllocateMemory, not 500.
    assert during["device_allocations"] - before["device_allocations"] <= 1
    del tensors
    after = hook.device_stats(dev)
    assert after["live_allocations"] == before["live_allocations"]


def test_sub_allocator_ranges_never_overlap(dev):
    # Random sizes and alignments, random frees: every live tensor keeps its own contents.
    rng = np.random.default_rng(5)
    live = {}
    for step in range(400):
        if live and rng.random() < 0.4:
            del live[rng.choice(list(live))]
            continue
        n = int(rng.choice([1, 3, 64, 1000, 5000, 70000]))
        dtype = str(rng.choice(["int8", "int32", "float64"]))
        value = np.full(n, step % 100, dtype=dtype)
        live[step] = (tvm.runtime.tensor(value, dev), value)
    for t, value in live.values():
        np.testing.assert_array_equal(t.numpy(), value)


def test_many_allocations_are_freed(dev):
    for _ in range(200):
        t = tvm.runtime.empty((1 << 20,), "float32", dev)  # 4 MiB each, 800 MiB in total
        del t
    assert hook.device_stats(dev)["block_bytes"] < 512 << 20


def test_launches_are_batched(dev):
    mod = load_payload(payload_of("add"))
    x = tvm.runtime.tensor(np.ones(1024, dtype="float32"), dev)
    c = tvm.runtime.empty((1024,), "float32", dev)
    dev.sync()
    before = hook.device_stats(dev)
    for _ in range(100):
        mod["add_kernel"](x, x, c, 16, 64)
    queued = hook.device_stats(dev)
    assert queued["commands"] - before["commands"] == 100
    assert queued["submits"] == before["submits"]  # nothing submitted until the host waits
    dev.sync()
    after = hook.device_stats(dev)
    assert after["submits"] - before["submits"] == 1 and after["fence_waits"] - before["fence_waits"] == 1
    np.testing.assert_array_equal(c.numpy(), np.full(1024, 2.0, dtype="float32"))


def test_free_while_kernel_pending(dev):
    # A buffer freed right after a launch is returned only once the launch completed: the
    # allocation that reuses its range must not be overwritten by the pending kernel.
    mod = load_payload(payload_of("add"))
    x = np.ones(1024, dtype="float32")
    for _ in range(20):
        a, b = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(x, dev)
        c = tvm.runtime.empty((1024,), "float32", dev)
        mod["add_kernel"](a, b, c, 16, 64)
        del c
        fresh = tvm.runtime.tensor(np.full(1024, 5.0, dtype="float32"), dev)
        np.testing.assert_array_equal(fresh.numpy(), np.full(1024, 5.0, dtype="float32"))


def test_host_write_waits_for_pending_reader(dev):
    # A kernel reading `a` is queued, then the host overwrites `a`: the kernel must see the old
    # contents (the copy waits for the pending batch that uses `a`).
    mod = load_payload(payload_of("add"))
    a = tvm.runtime.tensor(np.ones(1024, dtype="float32"), dev)
    c = tvm.runtime.empty((1024,), "float32", dev)
    mod["add_kernel"](a, a, c, 16, 64)
    a.copyfrom(np.full(1024, 100.0, dtype="float32"))
    np.testing.assert_array_equal(c.numpy(), np.full(1024, 2.0, dtype="float32"))


def test_sync_and_time_evaluator(dev):
    mod = tvm.runtime.load_module(str(VK_ARTIFACTS / "tiny_add.so"))
    a = tvm.runtime.tensor(np.ones(4, dtype="float32"), dev)
    c = tvm.runtime.empty((4,), "float32", dev)
    dev.sync()
    timer = mod.time_evaluator("tiny_add", dev, number=5, repeat=2)
    result = timer(a, a, c)
    assert len(result.results) == 2 and all(r > 0 for r in result.results)
    np.testing.assert_array_equal(c.numpy(), np.full(4, 2.0, dtype="float32"))


def test_streams_are_the_default_queue(dev):
    # One queue per device, as in apache-tvm's Vulkan runtime: no extra streams.
    assert dev.create_raw_stream() == 0
    dev.sync()
    tvm.get_global_func("runtime.Device_StreamSyncFromTo")(dev, 0, 0)


@pytest.mark.parametrize(
    "env",
    [{"TVM_VULKAN_FORCE_STAGING": "1"}, {"TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR": "1"}],
    ids=["staging-copies", "descriptor-sets"],
)
def test_alternative_paths(dev, env):
    # The staging-buffer copies (discrete GPUs) and descriptor-set binding (devices without
    # VK_KHR_push_descriptor) run every fixture, forced on whatever device this is.
    proc = run_module("children.vulkan_every_case", "staging", env=env)
    assert "ALL OK" in proc.stdout


def test_diagnostics_command(dev):
    proc = subprocess.run(
        [sys.executable, "-m", "tvm.backend", "--json"], capture_output=True, text=True, check=True
    )
    report = json.loads(proc.stdout)
    (vk,) = [b for b in report["backends"] if b["name"] == "vulkan"]
    assert vk["status"] == "loaded" and vk["distribution"] == "tvm-runtime-vulkan"
    (types,) = vk["device_types"]
    assert types["driver"] == "ok"
    first = types["devices"][0]
    assert first["device_name"] == dev.device_name
    assert first["target"]["kind"] == "vulkan"
    assert first["target"]["supports_float16"] == target_property(dev, "supports_float16")
    text = subprocess.run(
        [sys.executable, "-m", "tvm.backend"], capture_output=True, text=True, check=True
    ).stdout
    assert "vulkan" in text and dev.device_name in text and "-supports_float16=" in text
