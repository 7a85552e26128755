"""Real apache-tvm 0.27 OpenCL artifacts (tests/artifacts/opencl) give numpy-matching results."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from ocl_support import device_has_fp16, opencl_device

import tvm
from conftest import ARTIFACTS, case, cases, run_kernel_call

OPENCL_CASES = cases("opencl")
VM_CASES = cases("opencl", "vm")


@pytest.fixture(scope="module")
def dev():
    return opencl_device(tvm)


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
    c = case("opencl", "dyn_muladd")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    f = mod[c["function"]]
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    sizes = []
    for n in (17, 1000, 17):
        a = tvm.runtime.tensor(data[f"a_n{n}"], dev)
        b = tvm.runtime.tensor(data[f"b_n{n}"], dev)
        out = tvm.runtime.empty((n,), "float32", dev)
        f(a, b, out)
        np.testing.assert_allclose(out.numpy(), data[f"c_n{n}"], rtol=c["rtol"], atol=c["atol"])
        sizes.append(n)
    assert sizes == [17, 1000, 17]


def test_scalar_arguments(dev):
    c = case("opencl", "multi_out")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(256).astype("float32")
    b_np = rng.standard_normal(256).astype("float32")
    a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
    o1, o2 = tvm.runtime.empty((256,), "float32", dev), tvm.runtime.empty((256,), "float32", dev)
    for alpha, beta in ((1.5, 3), (-0.25, -7), (0.0, 0)):
        mod["multi_out"](a, b, alpha, beta, o1, o2)
        np.testing.assert_allclose(o1.numpy(), a_np * np.float32(alpha) + b_np, rtol=1e-6)
        np.testing.assert_allclose(o2.numpy(), a_np - np.float32(beta), rtol=1e-6)


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
    c = case("opencl", "matmul")
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


def test_time_evaluator(dev):
    c = case("opencl", "add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
    out = tvm.runtime.empty((1024,), "float32", dev)
    res = mod.time_evaluator("add", dev, number=5, repeat=2)(a, b, out)
    assert len(res.results) == 2 and res.mean > 0
    np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-6)


@pytest.mark.parametrize("case_", VM_CASES, ids=[c["name"] for c in VM_CASES])
def test_relax_model(case_, dev):
    try:
        mod = tvm.runtime.load_module(str(ARTIFACTS / case_["file"]))
    except RuntimeError as err:
        if "relax.VMExecutable" in str(err) and "not supported" in str(err):
            pytest.skip(f"the installed tvm-runtime core cannot run Relax executables: {err}")
        raise
    vm = tvm.runtime.vm.VirtualMachine(mod, dev)
    for call in case_["calls"]:
        data = np.load(ARTIFACTS / call["npz"])
        res = vm["main"](*[tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]])
        results = list(res) if case_["output_is_tuple"] else [res]
        for key, out in zip(call["outputs"], results):
            np.testing.assert_allclose(out.numpy(), data[key], rtol=case_["rtol"], atol=case_["atol"])
