"""Real apache-tvm 0.27 CUDA artifacts (tests/artifacts/cuda, tests/artifacts/relax/*_cuda.so)
give numpy-matching results on a GPU.  They hold CUDA C++ source, so NVRTC is needed too.
Skipped, with the reason, where there is no CUDA device."""

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
from cuda_support import cuda_device, nvrtc_or_skip

import tvm
import tvm.backend.cuda as hook
from conftest import ARTIFACTS, case, cases, run_kernel_call

CUDA_CASES = cases("cuda")
VM_CASES = cases("cuda", "vm")


@pytest.fixture(scope="module")
def dev():
    device = cuda_device(tvm)
    nvrtc_or_skip(int(device.driver_version) // 1000)
    return device


def test_required_cases_are_present():
    names = {c["name"] for c in CUDA_CASES}
    assert {"add", "add_fp16", "matmul", "row_sum", "dyn_muladd", "workspace", "multi_out"} <= names
    assert {"device_type": 2, "nbytes": 2097152} in case("cuda", "workspace")["workspace_allocs"]


@pytest.mark.parametrize("case_", CUDA_CASES, ids=[c["name"] for c in CUDA_CASES])
def test_artifact_matches_numpy(case_, dev):
    for call in case_["calls"]:
        check_outputs(case_, run_kernel_call(tvm, case_, call, dev))


def test_symbolic_shape_two_sizes_on_one_module(dev):
    check_symbolic_shape_sizes(tvm, "cuda", dev)


def test_scalar_arguments(dev):
    check_scalar_arguments(tvm, "cuda", dev, rtol=1e-5, atol=1e-6)


def test_workspace_kernel_repeated(dev):
    # The 2 MiB intermediate comes from TVMBackendAllocWorkspace(2, ...) on every call.
    c = case("cuda", "workspace")
    for _ in range(5):
        check_outputs(c, run_kernel_call(tvm, c, c["calls"][0], dev))


def test_concurrent_launches_from_threads(dev):
    check_concurrent_matmul(tvm, "cuda", dev)


def test_on_a_created_stream(dev):
    c = case("cuda", "add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    stream = dev.create_raw_stream()
    try:
        dev.set_raw_stream(stream)
        a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
        out = tvm.runtime.empty((1024,), "float32", dev)
        start, end = hook.Event(dev), hook.Event(dev)
        start.record()
        for _ in range(10):
            mod["add"](a, b, out)
        end.record()
        dev.sync()
        np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-6)
        assert start.elapsed_time(end) > 0
    finally:
        dev.set_raw_stream(0)
        dev.free_raw_stream(stream)


def test_time_evaluator(dev):
    check_time_evaluator(tvm, "cuda", dev)


def test_compiled_source_is_cached_for_this_gpu(dev):
    c = case("cuda", "row_sum")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    run_kernel_call(tvm, c, c["calls"][0], dev)  # compiles (or reuses) for this GPU
    # The target the runtime compiles for: arch-specific from compute capability 9.0 on
    # (sm_90a on Hopper), as apache-tvm 0.27's detected target.
    major, minor = (int(x) for x in dev.compute_version.split("."))
    arch = f"sm_{major}{minor}" + ("a" if major >= 9 else "")
    again = hook.compile_source(
        mod.imports[0].inspect_source(), arch, driver_major=int(dev.driver_version) // 1000
    )
    assert again["from_cache"] or again["format"] == "ptx"


@pytest.mark.parametrize("case_", VM_CASES, ids=[c["name"] for c in VM_CASES])
def test_relax_model(case_, dev):
    check_relax_case(tvm, case_, tvm.runtime.load_module(str(ARTIFACTS / case_["file"])), dev)
