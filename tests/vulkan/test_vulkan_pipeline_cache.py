"""The persistent VkPipelineCache of the Vulkan backend, on lavapipe with real apache-tvm 0.27
artifacts: one entry per kernel, seeded into the next process's pipeline build, and validated by the
driver's own header (vendor id, device id, pipelineCacheUUID) before any driver sees it."""

from __future__ import annotations

import struct

import pytest
from cache_testing import (
    WarmCache,
    encode_entry,
    entries,
    finish_kernels,
    parse_entry,
    run_kernels,
    start_kernels,
)
from vk_support import vulkan_device

import tvm

KERNELS = ["add", "matmul", "row_sum", "scalars_ubo"]


@pytest.fixture(scope="module")
def dev():
    return vulkan_device(tvm)


@pytest.fixture(scope="module")
def warm(dev, tmp_path_factory) -> WarmCache:
    """A cache filled by one process running every kernel."""
    return WarmCache.fill("vulkan", KERNELS, tmp_path_factory.mktemp("vulkan-warm") / "cache")


def header_of(payload: bytes) -> tuple[int, int, int, int, bytes]:
    """VkPipelineCacheHeaderVersionOne: size, version, vendor id, device id, pipelineCacheUUID."""
    return struct.unpack_from("<IIII16s", payload)


def test_first_process_stores_each_pipeline_cache(warm):
    directory, result = warm.directory, warm.result
    assert all(result["ok"].values()), result["ok"]
    stats = result["cache"]
    assert (stats["misses"], stats["stored"], stats["hits"]) == (len(KERNELS), len(KERNELS), 0)
    found = entries(directory)
    assert set(found) == {warm.entry(k) for k in KERNELS}
    for entry in found.values():
        fields = entry.fields
        assert fields["kind"] == "vulkan-pipeline/1" and fields["runtime"] == tvm.__version__
        size, version, vendor, device, uuid = header_of(entry.payload)
        # The driver's header agrees with what the key recorded about the device.
        assert size >= 32 and version == 1
        assert (vendor, device) == (int(fields["vendor_id"]), int(fields["device_id"]))
        assert uuid.hex() == fields["pipeline_cache_uuid"]


def test_second_process_seeds_its_pipelines_from_the_cache(warm, tmp_path):
    directory = warm.copy(tmp_path)
    result = run_kernels("vulkan", KERNELS, {"TVM_VULKAN_CACHE_DIR": str(directory)})
    assert all(result["ok"].values())
    stats = result["cache"]
    assert (stats["hits"], stats["misses"], stats["stored"], stats["rejected"]) == (len(KERNELS), 0, 0, 0)


def _with_header(payload: bytes, offset: int, value: bytes) -> bytes:
    return payload[:offset] + value + payload[offset + len(value) :]


FOREIGN = {
    # A sound entry whose pipeline-cache data belongs to another GPU or driver build.
    "add": lambda p: _with_header(p, 8, struct.pack("<I", header_of(p)[2] ^ 0x1234)),  # vendor id
    "matmul": lambda p: _with_header(p, 12, struct.pack("<I", header_of(p)[3] + 1)),  # device id
    "row_sum": lambda p: _with_header(p, 16, bytes(16)),  # pipelineCacheUUID
    "scalars_ubo": lambda p: _with_header(p, 4, struct.pack("<I", 2)),  # header version
}


def test_pipeline_cache_data_of_another_device_is_never_used(warm, tmp_path):
    directory = warm.copy(tmp_path)
    for name, change in FOREIGN.items():
        path = directory / warm.entry(name)
        entry = parse_entry(path.read_bytes())
        path.write_bytes(encode_entry(entry.description, change(entry.payload)))
    result = run_kernels("vulkan", KERNELS, {"TVM_VULKAN_CACHE_DIR": str(directory)})
    assert all(result["ok"].values())
    stats = result["cache"]
    assert (stats["rejected"], stats["stored"], stats["hits"]) == (len(FOREIGN), len(FOREIGN), 0)
    # Each was rebuilt and replaced by data for this device.
    for name in FOREIGN:
        assert (
            parse_entry((directory / warm.entry(name)).read_bytes()).payload
            == parse_entry((warm.directory / warm.entry(name)).read_bytes()).payload
        )


def test_damaged_entries_and_concurrent_writers(warm, tmp_path):
    directory = warm.copy(tmp_path)
    first = directory / warm.entry("add")
    first.write_bytes(first.read_bytes()[:-7])
    second = directory / warm.entry("matmul")
    data = second.read_bytes()
    second.write_bytes(data[:100] + bytes([data[100] ^ 0xFF]) + data[101:])
    env = {"TVM_VULKAN_CACHE_DIR": str(directory)}
    procs = [start_kernels("vulkan", KERNELS[i:] + KERNELS[:i], env) for i in range(3)]
    results = [finish_kernels(p) for p in procs]
    assert all(all(r["ok"].values()) for r in results)
    assert sum(r["cache"]["rejected"] for r in results) >= 2
    assert len(entries(directory)) == len(KERNELS)
    assert not [p for p in directory.iterdir() if ".tmp." in p.name]
