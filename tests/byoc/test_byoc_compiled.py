"""Artifacts made by apache-tvm's own external codegens, not by hand: tests/artifacts/byoc_compiled
(tests/artifacts/generate_byoc_compiled.py, run by apache/tvm built from source with
``relax.ext.dnnl``, ``relax.ext.cublas`` and ``relax.ext.cudnn``; `nox -s byoc-fixtures`).

dnnl_json runs on oneDNN on the CPU; cublas_json and cudnn_json run on the fake CUDA driver with
the fake cuBLASLt/cuDNN that check every call (no GPU here).  Every output is checked against
numpy's, which the generator computed independently of both compilers' runtimes.
"""

from __future__ import annotations

import numpy as np
import pytest
from byoc_support import fixture_set, onednn_or_skip
from cuda_fakes import build_fakes, calls, run_artifact
from cuda_numerics import GELU_FUNCTIONS, assert_matches, tf32_in_effect

import tvm
import tvm.backend.dnnl  # noqa: F401

DIR, MANIFEST, EXPECTED = fixture_set("byoc_compiled")
ARTIFACTS = MANIFEST["artifacts"]
# cuBLASLt's epilogue codes (cublasLt.h) for the composites' suffixes.
EPILOGUE = {"": "1", "_bias": "4", "_bias_relu": "6", "_bias_gelu": "36", "_dequantize": "1"}
CUDNN_FUSED = "cudnnConvolutionBiasActivationForward"


def inputs_of(prefix: str, func: str) -> list[np.ndarray]:
    return [EXPECTED[k] for k in EXPECTED.files if k.startswith(f"{prefix}:{func}:")]


DNNL = {
    case_name: (file, case)
    for file, art in ARTIFACTS.items()
    if file.startswith("dnnl_") and "broken_by_the_compiler" not in art
    for case_name, case in art["cases"].items()
}


def test_the_fixtures_come_from_the_compilers_codegens():
    """What the manifest records is what the generator saw the compiler do: external modules of
    the codegen's kind, one per offloaded function, in the tree 0.27's linker builds."""
    assert "5d4dc8721307cf9677becacf0395c19be130e206" in MANIFEST["compiler"]["source"]
    kinds = {"dnnl": "dnnl_json", "cublas": "cublas_json", "cudnn": "cudnn_json"}
    assert {name.split("_")[0] for name in ARTIFACTS} == set(kinds)
    for name, art in ARTIFACTS.items():
        kind = kinds[name.split("_")[0]]
        tree = art["modules_in_serialized_order"]
        assert tree[:2] == ["relax.VMExecutable", "const_loader"], tree
        assert tree.count(kind) == len(art["external_symbols"]) >= 1, tree
        for case in art["cases"].values():
            assert case["offloaded_composites"], case
            if "source_build_runtime_max_abs_err_vs_numpy" in case:  # ran on apache-tvm too
                assert case["source_build_runtime_max_abs_err_vs_numpy"] < 1e-4
    # MergeCompositeFunctions put the two convolutions of each model's tail in one module.
    merged = [
        c
        for name, art in ARTIFACTS.items()
        if "broken_by_the_compiler" not in art
        for c in art["external_symbols"].values()
        if len(c) == 2
    ]
    assert merged == [["dnnl.conv2d_relu", "dnnl.conv2d_relu"], ["dnnl.conv2d_bias", "dnnl.conv2d_relu"]]
    assert [
        case["offloaded_composites"] for case in ARTIFACTS["dnnl_small_cnn_cpu.so"]["cases"].values()
    ] == [["dnnl.conv2d_bias_relu", "dnnl.conv2d_bias", "dnnl.conv2d_relu"]]


@pytest.fixture
def _onednn():
    onednn_or_skip(tvm)


@pytest.mark.usefixtures("_onednn")
@pytest.mark.parametrize("case_name", list(DNNL))
def test_dnnl_artifact_matches_numpy(case_name):
    file, case = DNNL[case_name]
    mod = tvm.runtime.load_module(str(DIR / file))
    vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
    args = [tvm.runtime.tensor(a) for a in inputs_of("dnnl", case_name)]
    want = EXPECTED[f"dnnl_out:{case_name}"]
    for _ in range(2):  # the second run reuses the engines and primitives of the first
        got = vm[case["function"]](*args).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_dnnl_graph_without_its_weights_fails_with_the_node_and_the_reason():
    """The compiler's own DNNL output when the weights are bound into the composites: its
    serializer leaves them out of the graph (apache-tvm's runtime stops at an internal check).
    Ours refuses the module when the VM initializes it, naming the node and what is missing."""
    art = ARTIFACTS["dnnl_bound_weights_cpu.so"]
    assert "bind_constants=True" in art["broken_by_the_compiler"]
    mod = tvm.runtime.load_module(str(DIR / "dnnl_bound_weights_cpu.so"))
    with pytest.raises(
        RuntimeError,
        match=r"node 1 \('dnnl.conv2d_bias_relu'\) of the dnnl_json module .*"
        r"a conv2d with bias takes data, weight and bias",
    ):
        tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    return build_fakes()


def test_cublas_artifact_matches_numpy_with_the_compilers_epilogues(fakes):
    r = run_artifact(fakes, "cublaslt", "cublas_cuda.so", "cublas", fixtures="byoc_compiled")
    assert r["status"] == ""
    for func, case in ARTIFACTS["cublas_cuda.so"]["cases"].items():
        want = EXPECTED[f"cublas_out:{func}"]
        got = np.array(r["outs"][func])
        assert_matches(got, want, tf32=tf32_in_effect("cublas"), gelu=func in GELU_FUNCTIONS, what=func)
        text = r["logs"][func]
        assert "error:" not in text, text
        matmuls = calls(text, "cublasLtMatmul")
        composites = case["offloaded_composites"]
        assert len(matmuls) == 2 * len(composites), text  # two runs
        epilogues = [EPILOGUE[c.split("matmul", 1)[1].replace("_transposed", "")] for c in composites]
        assert [m["epilogue"] for m in matmuls[: len(composites)]] == epilogues, (func, text)
        if func == "dequantize":  # fp8 operands, the codegen's dq_scale as alpha
            assert matmuls[0]["ab_type"] == "28" and float(matmuls[0]["alpha"]) == 0.5, text
    assert r["live"] == 2  # this thread's handle and preference on device 0


def test_cudnn_artifact_matches_numpy(fakes):
    r = run_artifact(fakes, "cudnn", "cudnn_cuda.so", "cudnn", fixtures="byoc_compiled")
    assert r["status"] == ""
    for func, case in ARTIFACTS["cudnn_cuda.so"]["cases"].items():
        want = EXPECTED[f"cudnn_out:{func}"]
        got = np.array(r["outs"][func])
        # The fake computes float32 on TF32 tensor cores where the policy lets cuDNN use them.
        assert_matches(got, want, tf32=tf32_in_effect("cudnn"), what=func)
        text = r["logs"][func]
        assert "error:" not in text, text
        fused = "_bias" in case["offloaded_composites"][0]
        runs = calls(text, CUDNN_FUSED if fused else "cudnnConvolutionForward")
        assert len(runs) == 2, text
    assert r["live"] == 1  # this thread's handle on device 0
