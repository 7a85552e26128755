"""cublas_json (tvm-runtime-cuda, on cuBLASLt) without a GPU: the fake CUDA driver and the fake
cuBLASLt (tests/fakes/fake_cublaslt.c), which validates every call (handles,
descriptors, layouts, epilogues, workspace, algorithm, stream) and computes on the CPU.

``cublas_cuda.so`` is an apache-tvm 0.27 Relax model for CUDA whose matmuls are seven
hand-assembled cublas_json modules (tests/artifacts/generate_byoc.py says why and how).
"""

from __future__ import annotations

import numpy as np
import pytest
from byoc_support import EXPECTED, MANIFEST, fixture_set
from cuda_fakes import build_fakes, calls, run_artifact, run_fake
from cuda_numerics import GELU_FUNCTIONS, assert_matches, tf32_in_effect

import tvm.backend.cuda as hook

WORKSPACE = 32 << 20
FUNCTIONS = MANIFEST["artifacts"]["cublas_cuda.so"]["functions"]
# cuBLASLt's epilogue codes (cublasLt.h): BIAS 4, RELU_BIAS 6, GELU_BIAS 36; none: DEFAULT 1.
EPILOGUES = {"mlp": ["6", "36"], "half": ["4"]}


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    return build_fakes()


def artifact_run(fakes, **env):
    return run_artifact(fakes, "cublaslt", "cublas_cuda.so", "cublas", **env)


def test_artifact_matches_numpy_and_every_call_is_checked(fakes):
    r = artifact_run(fakes)
    assert r["status"] == ""
    for func in FUNCTIONS:
        want = EXPECTED[f"cublas_out:{func}"]
        got = np.array(r["outs"][func])
        tol = 1e-3 if want.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(got, want.astype("float64"), rtol=tol, atol=tol, err_msg=func)
        text = r["logs"][func]
        assert "error:" not in text, text
        matmuls = calls(text, "cublasLtMatmul")
        kernels = len(EPILOGUES.get(func, ["1"]))
        assert len(matmuls) == 2 * kernels, text
        assert [m["epilogue"] for m in matmuls[:kernels]] == EPILOGUES.get(func, ["1"]), text
        for m in matmuls:
            assert int(m["workspace_size"]) == WORKSPACE and m["workspace"] != "(nil)"
            assert m["stream"] == "(nil)"  # the device's current stream: the default one
        assert len({m["handle"] for m in matmuls}) == 1 and len({m["workspace"] for m in matmuls}) == 1
    # Every call destroyed its descriptors and layouts: what is left is this thread's handle
    # and preference on device 0.
    assert r["live"] == 2


def test_layouts_follow_the_row_major_operands(fakes):
    r = artifact_run(fakes)
    by_func = {f: calls(r["logs"][f], "cublasLtMatmul")[0] for f in FUNCTIONS}
    # C[m, n] = lhs[m, k] . rhs: cuBLASLt computes C^T = rhs^T . lhs^T, so its m is our n.
    assert (by_func["mlp"]["m"], by_func["mlp"]["n"], by_func["mlp"]["k"]) == ("16", "4", "32")
    second = calls(r["logs"]["mlp"], "cublasLtMatmul")[1]
    assert (second["transa"], second["m"], second["k"]) == ("1", "8", "16")  # transposed rhs
    assert by_func["batched"]["batch"] == "2" and by_func["flattened"]["batch"] == "1"
    assert by_func["flattened"]["n"] == "6"  # both batches' rows in one GEMM
    assert (by_func["half"]["ab_type"], by_func["half"]["d_type"]) == ("2", "2")  # CUDA_R_16F
    assert (by_func["int8"]["compute"], by_func["int8"]["d_type"]) == ("72", "10")  # 32I
    assert by_func["dequantize"]["ab_type"] == "28" and float(by_func["dequantize"]["alpha"]) == 0.5


def test_current_stream_is_used(fakes):
    r = run_fake(
        fakes,
        "cublaslt",
        """
        g = Graph()
        x, w = g.input("x", (2, 3)), g.input("w", (3, 4))
        y = g.kernel("cublas.matmul", [x, w], (2, 4))
        f = module("cublas_json", "sym", g, [y]).get_function("sym")
        a, b = np.arange(6, dtype="float32").reshape(2, 3), np.ones((3, 4), "float32")
        out = tvm.runtime.empty((2, 4), "float32", dev)
        stream = dev.create_raw_stream()
        with tvm_ffi.use_raw_stream(dev, stream):
            f(on_device(a), on_device(b), out)
        result(stream=hex(stream), out=out.numpy().tolist(), log=log())
        """,
    )
    (m,) = calls(r["log"], "cublasLtMatmul")
    assert int(m["stream"], 16) == int(r["stream"], 16) != 0
    np.testing.assert_array_equal(r["out"], np.arange(6).reshape(2, 3) @ np.ones((3, 4)))


def test_each_thread_has_its_own_workspace(fakes):
    r = run_fake(
        fakes,
        "cublaslt",
        """
        import threading
        g = Graph()
        x, w = g.input("x", (2, 3)), g.input("w", (3, 4))
        y = g.kernel("cublas.matmul_bias", [x, w, g.input("b", (4,))], (2, 4))
        f = module("cublas_json", "sym", g, [y]).get_function("sym")
        args = [on_device(np.ones(s, "float32")) for s in [(2, 3), (3, 4), (4,)]]
        def call():
            f(*args, tvm.runtime.empty((2, 4), "float32", dev))
        call()
        t = threading.Thread(target=call)
        t.start(); t.join()
        # join() returns when the Python thread ends; its C++ thread_local state is destroyed
        # as the OS thread exits, a moment later.
        import time
        deadline = time.monotonic() + 10
        while live() != 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        result(log=log(), live=live())
        """,
    )
    matmuls = calls(r["log"], "cublasLtMatmul")
    assert len(matmuls) == 2 and "error:" not in r["log"]
    assert matmuls[0]["workspace"] != matmuls[1]["workspace"]
    assert matmuls[0]["handle"] != matmuls[1]["handle"]
    assert r["live"] == 2  # the thread's handle and preference went with the thread


BAD_GRAPHS = {
    "unknown-op": ("cublas.conv2d", [(2, 3), (3, 4)], (2, 4), "is not a cuBLAS composite"),
    "missing-bias": ("cublas.matmul_bias_relu", [(2, 3), (3, 4)], (2, 4), "takes 3 inputs"),
    "k-mismatch": ("cublas.matmul", [(2, 3), (5, 4)], (2, 4), "reduction axes"),
    "batch-mismatch": ("cublas.matmul", [(2, 2, 3), (3, 3, 4)], (2, 2, 4), "equal batch counts"),
    "bias-length": ("cublas.matmul_bias", [(2, 3), (3, 4), (5,)], (2, 4), "one value per output"),
    "out-shape": ("cublas.matmul", [(2, 3), (3, 4)], (2, 5), "output shape"),
}


@pytest.mark.parametrize("case", list(BAD_GRAPHS.values()), ids=list(BAD_GRAPHS))
def test_unsupported_graphs_fail_at_init_with_the_reason(fakes, case):
    name, shapes, out_shape, message = case
    r = run_fake(
        fakes,
        "cublaslt",
        f"""
        g = Graph()
        ins = [g.input(f"i{{k}}", s) for k, s in enumerate({shapes!r})]
        y = g.kernel({name!r}, ins, {out_shape!r})
        result_of_building("cublas_json", g, [y])
        """,
    )
    assert r["error"] and message in r["error"], r
    assert "cublasLtMatmul" not in r["log"]


def test_tensors_on_the_host_are_a_value_error(fakes):
    r = run_fake(
        fakes,
        "cublaslt",
        """
        g = Graph()
        y = g.kernel("cublas.matmul", [g.input("x", (2, 3)), g.input("w", (3, 4))], (2, 4))
        f = module("cublas_json", "sym", g, [y]).get_function("sym")
        try:
            f(tvm.runtime.tensor(np.ones((2, 3), "float32")), on_device(np.ones((3, 4), "float32")),
              tvm.runtime.empty((2, 4), "float32", dev))
        except ValueError as err:
            result(error=str(err))
        """,
    )
    assert "is on device type 1, expected 2" in r["error"]


def test_no_algorithm_is_a_clear_error(fakes):
    r = run_fake(
        fakes,
        "cublaslt",
        """
        g = Graph()
        y = g.kernel("cublas.matmul", [g.input("x", (2, 3)), g.input("w", (3, 4))], (2, 4))
        f = module("cublas_json", "sym", g, [y]).get_function("sym")
        try:
            f(on_device(np.ones((2, 3), "float32")), on_device(np.ones((3, 4), "float32")),
              tvm.runtime.empty((2, 4), "float32", dev))
        except RuntimeError as err:
            result(error=str(err), live=live())
        """,
        FAKE_CUBLASLT_NO_ALGO="1",
    )
    assert "no cuBLASLt algorithm" in r["error"] and "CUBLAS_STATUS_NOT_SUPPORTED" in r["error"]
    assert r["live"] == 2  # the descriptors of the failed call were destroyed


def test_missing_cublaslt_names_the_wheel(fakes):
    r = run_fake(
        fakes,
        "cublaslt",
        """
        status = hook.cublaslt_status()
        try:
            load_from_bytes(tvm, "cublas_json", b"")
        except Exception as err:
            bad_payload = type(err).__name__
        g = Graph()
        y = g.kernel("cublas.matmul", [g.input("x", (2, 3)), g.input("w", (3, 4))], (2, 4))
        try:
            module("cublas_json", "sym", g, [y]).get_function("sym")
        except RuntimeError as err:
            result(status=status, error=str(err), bad_payload=bad_payload)
        """,
        TVM_CUBLASLT_LIBRARY="/nonexistent/libcublasLt.so.13",
    )
    for text in (r["status"], r["error"]):
        assert 'pip install "tvm-runtime-cuda[cublas]"' in text and "TVM_CUBLASLT_LIBRARY" in text
        assert "/nonexistent/libcublasLt.so.13" in text
    assert r["bad_payload"] == "ValueError"


def test_locator_finds_the_cublas_wheel_layouts(tmp_path, monkeypatch):
    for sub in ("nvidia/cu13/lib/libcublasLt.so.13", "nvidia/cublas/lib/libcublasLt.so.12"):
        (tmp_path / sub).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / sub).write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = hook.locate_library("cublasLt")
    assert str(tmp_path / "nvidia/cu13/lib/libcublasLt.so.13") in found
    assert str(tmp_path / "nvidia/cublas/lib/libcublasLt.so.12") in found
    assert hook.locate_library("no-such-library") == []


def test_each_device_has_its_own_state_and_devices_are_not_mixed(fakes):
    r = run_fake(
        fakes,
        "cublaslt",
        """
        g = Graph()
        y = g.kernel("cublas.matmul", [g.input("x", (2, 3)), g.input("w", (3, 4))], (2, 4))
        f = module("cublas_json", "sym", g, [y]).get_function("sym")
        d1 = tvm.cuda(1)
        a, b = np.ones((2, 3), "float32"), np.ones((3, 4), "float32")
        out = tvm.runtime.empty((2, 4), "float32", d1)
        f(on_device(a), on_device(b), tvm.runtime.empty((2, 4), "float32", dev))
        f(tvm.runtime.tensor(a, device=d1), tvm.runtime.tensor(b, device=d1), out)
        try:
            f(on_device(a), tvm.runtime.tensor(b, device=d1), out)
            mixed = None
        except ValueError as err:
            mixed = str(err)
        result(log=log(), out=out.numpy().tolist(), mixed=mixed, live=live())
        """,
        FAKE_CUDA_DEVICES="2",
    )
    matmuls = calls(r["log"], "cublasLtMatmul")
    assert len(matmuls) == 2 and matmuls[0]["handle"] != matmuls[1]["handle"]
    np.testing.assert_array_equal(r["out"], np.full((2, 4), 3.0))
    assert "are on different CUDA devices (0 and 1)" in r["mixed"]
    assert r["live"] == 4  # a handle and a preference per device


# ---------------------------------------------------------------------------------- numerics
# The float32 policy (src/backends/cuda/byoc/tf32_policy.h, tests/byoc/cuda_numerics.py): unset and 0
# as apache-tvm 0.27 (CUBLAS_COMPUTE_32F: plain fp32), 1 (CUBLAS_COMPUTE_32F_FAST_TF32).
COMPUTE_32F, COMPUTE_32I, COMPUTE_32F_FAST_TF32 = "68", "72", "77"
POLICIES = {"unset": "", "0": "0", "1": "1"}


@pytest.mark.parametrize("policy", list(POLICIES.values()), ids=list(POLICIES))
def test_compute_type_follows_the_tf32_policy(fakes, policy):
    """The compute type of every matmul of apache-tvm 0.27's compiled cuBLAS fixtures, whether it
    ran on TF32 (the fake rounds the operands then), and numpy within the policy's tolerance; the
    GELU epilogue is checked against the tanh form with its documented tolerance."""
    tf32 = tf32_in_effect("cublas", {"TVM_CUDA_ALLOW_TF32": policy})
    assert tf32 == (policy == "1")
    r = run_artifact(
        fakes, "cublaslt", "cublas_cuda.so", "cublas", fixtures="byoc_compiled", TVM_CUDA_ALLOW_TF32=policy
    )
    _, manifest, expected = fixture_set("byoc_compiled")
    for func in manifest["artifacts"]["cublas_cuda.so"]["functions"]:
        want = expected[f"cublas_out:{func}"]
        text = r["logs"][func]
        assert "error:" not in text, text
        matmuls = calls(text, "cublasLtMatmul")
        fp32_inputs = func in ("mlp", "batched", "flattened")
        for m in matmuls:
            if fp32_inputs:
                assert m["compute"] == (COMPUTE_32F_FAST_TF32 if tf32 else COMPUTE_32F), (func, m)
            else:  # half, fp8 and int8 inputs never change
                assert m["compute"] == (COMPUTE_32I if func == "int8" else COMPUTE_32F), (func, m)
            assert m["tf32"] == ("1" if tf32 and fp32_inputs else "0"), (func, m)
        got = np.array(r["outs"][func])
        gelu = func in GELU_FUNCTIONS
        assert ("36" in {m["epilogue"] for m in matmuls}) == gelu, (func, text)  # GELU_BIAS
        assert_matches(got, want, tf32=tf32 and fp32_inputs, gelu=gelu, what=func, plain=1e-5, half=1e-3)
        if fp32_inputs:
            err = float(np.abs(got - want.astype("float64")).max())
            assert (err > 1e-4) == tf32, (func, err)
