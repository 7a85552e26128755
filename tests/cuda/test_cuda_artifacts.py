"""Real apache-tvm 0.27 CUDA artifacts (tests/artifacts/cuda, tests/artifacts/relax/*_cuda.so)
give numpy-matching results on a GPU.  They hold CUDA C++ source, so NVRTC is needed too.
Skipped, with the reason, where there is no CUDA device."""

from __future__ import annotations

import threading

import numpy as np
import pytest
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


def check_outputs(case_, outputs):
    assert outputs
    for key, out, expected in outputs:
        np.testing.assert_allclose(
            out.numpy().astype("float64"),
            expected.astype("float64"),
            rtol=case_["rtol"],
            atol=case_["atol"],
            err_msg=f"{case_['name']}: {key}",
        )


def test_required_cases_are_present():
    names = {c["name"] for c in CUDA_CASES}
    assert {"add", "add_fp16", "matmul", "row_sum", "dyn_muladd", "workspace", "multi_out"} <= names
    assert {"device_type": 2, "nbytes": 2097152} in case("cuda", "workspace")["workspace_allocs"]


@pytest.mark.parametrize("case_", CUDA_CASES, ids=[c["name"] for c in CUDA_CASES])
def test_artifact_matches_numpy(case_, dev):
    for call in case_["calls"]:
        check_outputs(case_, run_kernel_call(tvm, case_, call, dev))


def test_symbolic_shape_two_sizes_on_one_module(dev):
    c = case("cuda", "dyn_muladd")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    f = mod[c["function"]]
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    for n in (17, 1000, 17):
        a = tvm.runtime.tensor(data[f"a_n{n}"], dev)
        b = tvm.runtime.tensor(data[f"b_n{n}"], dev)
        out = tvm.runtime.empty((n,), "float32", dev)
        f(a, b, out)
        np.testing.assert_allclose(out.numpy(), data[f"c_n{n}"], rtol=c["rtol"], atol=c["atol"])


def test_scalar_arguments(dev):
    c = case("cuda", "multi_out")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(256).astype("float32")
    b_np = rng.standard_normal(256).astype("float32")
    a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
    o1, o2 = tvm.runtime.empty((256,), "float32", dev), tvm.runtime.empty((256,), "float32", dev)
    for alpha, beta in ((1.5, 3), (-0.25, -7), (0.0, 0)):
        mod["multi_out"](a, b, alpha, beta, o1, o2)
        np.testing.assert_allclose(o1.numpy(), a_np * np.float32(alpha) + b_np, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(o2.numpy(), a_np - np.float32(beta), rtol=1e-6)


def test_workspace_kernel_repeated(dev):
    # The 2 MiB intermediate comes from TVMBackendAllocWorkspace(2, ...) on every call.
    c = case("cuda", "workspace")
    for _ in range(5):
        check_outputs(c, run_kernel_call(tvm, c, c["calls"][0], dev))


def test_concurrent_launches_from_threads(dev):
    c = case("cuda", "matmul")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    f = mod[c["function"]]
    errors = []

    def worker(seed):
        try:
            rng = np.random.default_rng(seed)
            a_np = rng.standard_normal((64, 32)).astype("float32")
            b_np = rng.standard_normal((32, 48)).astype("float32")
            a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
            out = tvm.runtime.empty((64, 48), "float32", dev)
            for _ in range(20):
                f(a, b, out)
                np.testing.assert_allclose(out.numpy(), a_np @ b_np, rtol=1e-4, atol=1e-4)
        except Exception as err:  # noqa: BLE001 - collected and re-raised below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


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
    c = case("cuda", "add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
    out = tvm.runtime.empty((1024,), "float32", dev)
    res = mod.time_evaluator("add", dev, number=5, repeat=2)(a, b, out)
    assert len(res.results) == 2 and res.mean > 0
    np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-6)


def test_compiled_source_is_cached_for_this_gpu(dev):
    c = case("cuda", "row_sum")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    run_kernel_call(tvm, c, c["calls"][0], dev)  # compiles (or reuses) for this GPU
    arch = "sm_" + dev.compute_version.replace(".", "")
    again = hook.compile_source(
        mod.imports[0].inspect_source(), arch, driver_major=int(dev.driver_version) // 1000
    )
    assert again["from_cache"] or again["format"] == "ptx"


@pytest.mark.parametrize("case_", VM_CASES, ids=[c["name"] for c in VM_CASES])
def test_relax_model(case_, dev):
    if not hasattr(tvm.runtime, "vm"):
        pytest.skip("this tvm-runtime core has no Relax VM (tvm.runtime.vm) yet")
    mod = tvm.runtime.load_module(str(ARTIFACTS / case_["file"]))
    vm = tvm.runtime.vm.VirtualMachine(mod, dev)
    for call in case_["calls"]:
        data = np.load(ARTIFACTS / call["npz"])
        res = vm["main"](*[tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]])
        results = list(res) if case_["output_is_tuple"] else [res]
        for key, out in zip(call["outputs"], results):
            np.testing.assert_allclose(out.numpy(), data[key], rtol=case_["rtol"], atol=case_["atol"])
