"""Real apache-tvm 0.27 OpenCL artifacts (tests/artifacts/opencl) give numpy-matching results."""

from __future__ import annotations

import numpy as np
import pytest
from backend_testing.runners import (
    check_concurrent_matmul,
    check_outputs,
    check_relax_case,
    check_scalar_arguments,
    check_symbolic_shape_sizes,
    check_time_evaluator,
)
from ocl_support import device_has_fp16, opencl_device

import tvm
from conftest import ARTIFACTS, case, cases, run_kernel_call

OPENCL_CASES = cases("opencl")
VM_CASES = cases("opencl", "vm")


@pytest.fixture(scope="module")
def dev():
    return opencl_device(tvm)


@pytest.mark.parametrize("case_", OPENCL_CASES, ids=[c["name"] for c in OPENCL_CASES])
def test_artifact_matches_numpy(case_, dev):
    if case_["name"] == "add_fp16" and not device_has_fp16(tvm, dev):
        pytest.skip(
            f"{dev.device_name} has no cl_khr_fp16 (Debian's PoCL 3.1 does not); "
            "test_fp16_without_device_support covers the error path"
        )
    for call in case_["calls"]:
        check_outputs(case_, run_kernel_call(tvm, case_, call, dev))


def test_required_cases_are_present():
    names = {c["name"] for c in OPENCL_CASES}
    assert {"add", "add_fp16", "matmul", "row_sum", "dyn_muladd", "workspace", "multi_out"} <= names
    assert "__TVMBackendAllocWorkspace" in case("opencl", "workspace")["context_symbols"]


def test_fp16_without_device_support(dev):
    if device_has_fp16(tvm, dev):
        pytest.skip("the device supports fp16; test_artifact_matches_numpy[add_fp16] ran it")
    c = case("opencl", "add_fp16")
    with pytest.raises(RuntimeError) as info:
        run_kernel_call(tvm, c, c["calls"][0], dev)
    msg = str(info.value)
    assert "add_fp16_kernel" in msg and "failed to build" in msg
    assert "cl_khr_fp16" in msg and "Build log:" in msg


def test_fp16_tensors_round_trip(dev):
    # Even without fp16 arithmetic, half tensors are plain bytes to copy.
    x = np.linspace(-2, 2, 1000).astype("float16")
    t = tvm.runtime.tensor(x, dev)
    assert t.dtype == "float16"
    np.testing.assert_array_equal(t.numpy(), x)


def test_symbolic_shape_two_sizes_on_one_module(dev):
    assert check_symbolic_shape_sizes(tvm, "opencl", dev) == [17, 1000, 17]


def test_scalar_arguments(dev):
    check_scalar_arguments(tvm, "opencl", dev, rtol=1e-6)


def test_workspace_kernel_repeated(dev):
    # The 2 MiB intermediate comes from TVMBackendAllocWorkspace(4, ...) on every call.
    c = case("opencl", "workspace")
    for _ in range(5):
        check_outputs(c, run_kernel_call(tvm, c, c["calls"][0], dev))


def test_concurrent_launches_from_threads(dev):
    if str(dev.device_name).startswith("basic"):
        # PoCL 3.1's single-threaded `basic` device deadlocks inside pocl_update_event_running
        # when several host threads enqueue on one queue; pyopencl hangs the same way.
        pytest.skip("PoCL's basic device is not safe for multi-threaded enqueues")
    check_concurrent_matmul(tvm, "opencl", dev)


def test_time_evaluator(dev):
    check_time_evaluator(tvm, "opencl", dev)


@pytest.mark.parametrize("case_", VM_CASES, ids=[c["name"] for c in VM_CASES])
def test_relax_model(case_, dev):
    check_relax_case(tvm, case_, tvm.runtime.load_module(str(ARTIFACTS / case_["file"])), dev)
