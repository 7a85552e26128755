"""The OpenCL device API: attributes, memory, copies, streams, target detection, diagnostics."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from ocl_support import opencl_device

import tvm
from conftest import ARTIFACTS, case


@pytest.fixture(scope="module")
def dev():
    return opencl_device(tvm)


def test_attributes(dev):
    # What every device reports: tests/conformance/test_device.py.
    assert dev.warp_size == 1
    assert re.fullmatch(r"\d+\.\d", dev.compute_version)
    assert dev.max_clock_rate >= 0
    assert dev.multi_processor_count >= 1
    assert dev.api_version >= 120
    assert isinstance(dev.driver_version, str)
    assert dev.total_global_memory > 0
    assert dev.l2_cache_size_bytes >= 0
    assert dev.available_global_memory is None  # OpenCL has no query for it


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_many_allocations_are_freed(dev):
    """200 buffers of 4 MiB, each written and dropped: the memory must come back.  PoCL's
    buffers are this process's memory, so one leaked buffer per round would grow the resident set
    by 800 MiB; on a GPU's driver the loop still runs (the check then only bounds host memory)."""
    ones = np.ones(1 << 20, dtype="float32")
    warm = tvm.runtime.empty((1 << 20,), "float32", dev)
    warm.copyfrom(ones)
    del warm
    dev.sync()
    before = _resident_bytes()
    for _ in range(200):
        t = tvm.runtime.empty((1 << 20,), "float32", dev)  # 4 MiB each, 800 MiB in total
        t.copyfrom(ones)  # touched, so a leaked buffer is resident
        del t
    dev.sync()
    grown = _resident_bytes() - before
    assert grown < 128 << 20, f"the resident set grew by {grown >> 20} MiB over 200 freed 4 MiB buffers"


def test_streams(dev):
    c = case("opencl", "add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
    out = tvm.runtime.empty((1024,), "float32", dev)
    stream = dev.create_raw_stream()
    assert stream != 0
    try:
        dev.set_raw_stream(stream)
        for _ in range(3):
            out.copyfrom(np.zeros(1024, dtype="float32"))
            mod["add"](a, b, out)  # launched on `stream`
            # the copy goes to the current stream too, so it sees the kernel's result
            np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-6)
        mod["add"](a, b, out)
        dev.sync()  # the default queue and the current stream
        dev.sync(stream)
        tvm.get_global_func("runtime.Device_StreamSyncFromTo")(dev, stream, 0)
    finally:
        dev.set_raw_stream(0)
        dev.free_raw_stream(stream)
    np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-6)


def test_detect_target(dev):
    from tvm.backend.opencl import detect_target

    target = detect_target(dev)
    assert target["kind"] == "opencl"
    assert target["max_threads_per_block"] == dev.max_threads_per_block
    assert target["max_num_threads"] == dev.max_threads_per_block
    assert target["max_shared_memory_per_block"] == dev.max_shared_memory_per_block
    assert target["thread_warp_size"] == 1
    with pytest.raises(ValueError, match="cannot detect"):
        detect_target(tvm.opencl(63))


def test_diagnostics_command(dev):
    proc = subprocess.run(
        [sys.executable, "-m", "tvm.backend", "--json"], capture_output=True, text=True, check=True
    )
    assert "opencl" in proc.stdout
    report = json.loads(proc.stdout)
    assert "opencl" in json.dumps(report)
    assert dev.device_name in proc.stdout
