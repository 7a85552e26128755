"""The contract of `runtime.timer.<backend>` (backend/gpu/device_timer.h) on every backend that
measures device time here: OpenCL on PoCL (event profiling), Vulkan on lavapipe and WebGPU on
wgpu-native over lavapipe (timestamp queries).  Each runs apache-tvm's matmul kernel of its
fixtures: device time is positive and within the host time around it, a host sleep between two
launches is not device time, a timer is reusable, a stop without a start measures nothing, bad
use is a clear error, and the time evaluator reports it.  Backend-specific behaviour (OpenCL's
event folding and copies, the fallbacks, the VM profiler, exit) is in each backend's tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from backend_testing import device_timers as timers
from backend_testing.devices import device_or_skip

import tvm
from conftest import ARTIFACTS


@dataclass(frozen=True)
class MatmulFixture:
    device: str  # tvm.<device>(0)
    device_type: int
    api: str  # error messages and TVM_TEST_REQUIRE_<API>
    manifest: Path
    keys: tuple[str, str, str]  # a, b, c in the call's npz


BACKENDS = {
    "opencl": MatmulFixture("opencl", 4, "OpenCL", ARTIFACTS / "manifest.json", ("a", "b", "c")),
    "vulkan": MatmulFixture(
        "vulkan", 7, "Vulkan", ARTIFACTS / "vulkan" / "manifest.json", ("a_0", "b_0", "c_0")
    ),
    "webgpu": MatmulFixture("webgpu", 15, "WebGPU", ARTIFACTS / "webgpu" / "manifest.json", ("a", "b", "c")),
}


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def backend(request):
    """(timer name, device, launch, module, arguments, output check) of one backend's matmul."""
    name = request.param
    spec = BACKENDS[name]
    dev = device_or_skip(tvm, getattr(tvm, spec.device)(0), spec.device_type, spec.api)
    (case,) = [
        c
        for c in json.loads(spec.manifest.read_text())["cases"]
        if c["target"] == name and c["name"] == "matmul"
    ]
    mod = tvm.runtime.load_module(str(ARTIFACTS / case["file"]))
    data = np.load(ARTIFACTS / case["calls"][0]["npz"])
    a_key, b_key, c_key = spec.keys
    a, b = tvm.runtime.tensor(data[a_key], dev), tvm.runtime.tensor(data[b_key], dev)
    out = tvm.runtime.empty((64, 48), "float32", dev)
    f = mod["matmul"]
    f(a, b, out)  # kernel built (or loaded from a cache) outside every timing
    dev.sync()

    def check():
        np.testing.assert_allclose(out.numpy(), data[c_key], rtol=1e-4, atol=1e-4)

    return name, dev, (lambda: f(a, b, out)), mod, [a, b, out], check


def test_registered_by_the_backend(backend):
    name, *_ = backend
    assert tvm.get_global_func(f"runtime.timer.{name}", allow_missing=True) is not None


def test_kernel_device_time_is_positive_and_within_the_wall_time(backend):
    name, dev, run, _, _, check = backend
    timers.check_within_wall_time(tvm, name, dev, run)
    check()


def test_host_gaps_between_launches_are_not_device_time(backend):
    name, dev, run, _, _, check = backend
    timers.check_host_gaps_not_counted(tvm, name, dev, run)
    check()


def test_timer_is_reusable_and_a_stop_without_start_measures_nothing(backend):
    name, dev, run, _, _, _ = backend
    fresh = timers.timer_of(tvm, name, dev)
    fresh("stop")
    assert fresh("elapsed_ns") == 0
    timers.check_reusable_and_stable(tvm, name, dev, run)


def test_bad_use_says_what_is_wrong(backend):
    name, dev, _, _, _, _ = backend
    timers.check_bad_use(tvm, name, dev, BACKENDS[name].api)


def test_time_evaluator_reports_device_time(backend):
    name, dev, _, mod, args, check = backend
    timers.check_time_evaluator(mod, "matmul", dev, args)
    check()
