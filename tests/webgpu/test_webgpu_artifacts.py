"""apache-tvm 0.27 WebGPU kernels give numpy-matching results on the first adapter (lavapipe in
CI), loaded the way users load them: ``tvm.runtime.load_module(<case>.so)`` parses the library's
``__tvm_ffi__library_bin``, imports the ``webgpu`` module through our loader, and the host code
calls the WGSL kernels with packed ``[buffers..., scalars..., launch dims...]``."""

from __future__ import annotations

import numpy as np
import pytest
from backend_testing.runners import check_concurrent_launches, check_outputs
from webgpu_support import WGPU_ARTIFACTS, artifact, webgpu_device, wgpu_case, wgpu_cases

import tvm
from conftest import run_kernel_call, run_python

CASES = wgpu_cases()


@pytest.fixture(scope="module")
def dev():
    return webgpu_device(tvm)


@pytest.mark.parametrize("case_", CASES, ids=[c["name"] for c in CASES])
def test_artifact_matches_numpy(case_, dev):
    for call in case_["calls"]:
        check_outputs(case_, run_kernel_call(tvm, case_, call, dev))


def test_required_cases_are_present():
    names = {c["name"] for c in CASES}
    assert {"add", "add_fp16", "matmul", "row_sum", "dyn_muladd", "workspace", "multi_out"} <= names
    assert {"wide_grid", "tiny_add"} <= names
    assert {c["name"] for c in wgpu_cases("vm")} == {"mlp", "mlp_dyn", "convnet"}
    assert all(c["device_module"] == "webgpu" for c in wgpu_cases() + wgpu_cases("vm"))


def test_wide_grid_exceeds_the_per_dimension_limit(dev):
    info = tvm.backend.webgpu.adapter_info(dev)
    n = wgpu_case("wide_grid")["calls"][0]["args"][1]["shape"][0]
    assert n > info["max_compute_workgroups_per_dimension"]  # one workgroup per element


def test_module_tree_and_source(dev):
    mod = tvm.runtime.load_module(artifact("workspace"))
    (wg,) = mod.imports
    assert wg.kind == "webgpu"
    assert wg.implements_function("workspace_kernel")
    assert wg.implements_function("workspace_kernel_1")
    assert not wg.implements_function("workspace")
    src = wg.inspect_source()
    assert "fn workspace_kernel(" in src and "@workgroup_size(64, 1, 1)" in src


def test_symbolic_shapes_reuse_one_module(dev):
    c = wgpu_case("dyn_muladd")
    f = tvm.runtime.load_module(artifact("dyn_muladd"))["dyn_muladd"]
    data = np.load(WGPU_ARTIFACTS / "dyn_muladd.npz")
    for n in (17, 1000, 17, 1000):
        a, b = tvm.runtime.tensor(data[f"a_n{n}"], dev), tvm.runtime.tensor(data[f"b_n{n}"], dev)
        out = tvm.runtime.empty((n,), "float32", dev)
        f(a, b, out)
        np.testing.assert_allclose(out.numpy(), data[f"c_n{n}"], rtol=c["rtol"], atol=c["atol"])


def test_scalar_arguments_change_between_launches(dev):
    f = tvm.runtime.load_module(artifact("multi_out"))["multi_out"]
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal(256).astype("float32"), rng.standard_normal(256).astype("float32")
    a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
    outs = []
    # Launched back to back without a sync: each dispatch keeps its own scalars.
    for alpha, beta in ((1.5, 3), (-0.25, -7), (0.0, 0), (2.0, 100000)):
        o1, o2 = tvm.runtime.empty((256,), "float32", dev), tvm.runtime.empty((256,), "float32", dev)
        f(a, b, alpha, beta, o1, o2)
        outs.append((alpha, beta, o1, o2))
    for alpha, beta, o1, o2 in outs:
        np.testing.assert_allclose(o1.numpy(), a_np * np.float32(alpha) + b_np, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(o2.numpy(), a_np - np.float32(beta), rtol=1e-6)


def test_many_dispatches_before_a_sync(dev):
    """More launches than one batch holds: results stay in program order."""
    f = tvm.runtime.load_module(artifact("add"))["add"]
    x = np.ones(1024, "float32")
    acc = tvm.runtime.tensor(np.zeros(1024, "float32"), dev)
    one = tvm.runtime.tensor(x, dev)
    tmp = tvm.runtime.empty((1024,), "float32", dev)
    for _ in range(300):
        f(acc, one, tmp)
        f(tmp, one, acc)
    np.testing.assert_array_equal(acc.numpy(), np.full(1024, 600.0, "float32"))


def test_concurrent_launches(dev):
    check_concurrent_launches(tvm, artifact("matmul"), "matmul", dev, rounds=10)


def test_time_evaluator(dev):
    mod = tvm.runtime.load_module(artifact("add"))
    data = np.load(WGPU_ARTIFACTS / "add.npz")
    a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
    out = tvm.runtime.empty((1024,), "float32", dev)
    res = mod.time_evaluator("add", dev, number=5, repeat=2)(a, b, out)
    assert len(res.results) == 2 and res.mean > 0
    np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-6)


def test_fresh_buffers_every_launch(dev):
    """Launch bindings are cached per buffer: freed and reallocated buffers never reuse them."""
    f = tvm.runtime.load_module(artifact("add"))["add"]
    rng = np.random.default_rng(3)
    for _ in range(40):
        x, y = rng.standard_normal(1024).astype("float32"), rng.standard_normal(1024).astype("float32")
        out = tvm.runtime.empty((1024,), "float32", dev)
        f(tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), out)
        np.testing.assert_array_equal(out.numpy(), x + y)
        del out


def test_scalars_through_the_batch_arena():
    """TVM_WEBGPU_SCALAR_CACHE=0: every launch's scalars go through the per-batch uniform arena
    (what launches with large or ever-changing scalar sets use), across several batches."""
    proc = run_python(
        f"""
        import numpy as np, tvm
        dev = tvm.webgpu(0)
        f = tvm.runtime.load_module({artifact("multi_out")!r})["multi_out"]
        rng = np.random.default_rng(0)
        a_np, b_np = rng.standard_normal(256).astype("float32"), rng.standard_normal(256).astype("float32")
        a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
        outs = []
        for i in range(600):  # more than one batch of 256 dispatches
            o1, o2 = tvm.runtime.empty((256,), "float32", dev), tvm.runtime.empty((256,), "float32", dev)
            f(a, b, 0.5 * i, i, o1, o2)
            outs.append((i, o1, o2))
        for i, o1, o2 in outs:
            np.testing.assert_allclose(o1.numpy(), a_np * np.float32(0.5 * i) + b_np, rtol=1e-6, atol=1e-5)
            np.testing.assert_array_equal(o2.numpy(), a_np - np.float32(i))
        print("OK", tvm.backend.webgpu.device_stats(dev)["submits"])
        """,
        env={"TVM_WEBGPU_SCALAR_CACHE": "0"},
    )
    assert "OK" in proc.stdout, proc.stdout + proc.stderr


def test_kernel_reading_and_writing_one_buffer_runs(dev):
    """apache-tvm's storage rewrite gives an in-place step one workspace as both its input (a
    read-only binding) and its output (read-write): `fused_matmul_add_relu_kernel_1` of
    tests/artifacts/constants/weights_webgpu.so.  WebGPU forbids that within one dispatch and
    wgpu-native aborts the process at submit; the backend reads a snapshot instead."""
    consts = np.load(WGPU_ARTIFACTS.parent / "constants" / "weights.npz")
    lib = tvm.runtime.load_module(str(WGPU_ARTIFACTS.parent / "constants" / "weights_webgpu.so")).imports[0]
    assert "read_write> matmul_intermediate_ptr" in lib.imports[0].inspect_source()
    out = tvm.runtime.empty((4, 128), "float32", dev)
    args = [tvm.runtime.tensor(consts[k], dev) for k in ("x", "w1", "b1")]
    lib["fused_matmul_add_relu"](*args, out)
    expected = np.maximum(consts["x"] @ consts["w1"] + consts["b1"], 0)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
