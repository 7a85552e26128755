"""cudnn_json (tvm-runtime-cuda, on cuDNN 9) without a GPU: the fake CUDA driver and the fake
cuDNN (tests/fakes/fake_cudnn.c), which validates every call (handle, stream,
descriptors, algorithm, workspace, bias, activation) and computes the convolution on the CPU.

``cudnn_cuda.so`` is an apache-tvm 0.27 Relax model for CUDA whose convolutions are three
hand-assembled cudnn_json modules (tests/artifacts/generate_byoc.py says why and how).
"""

from __future__ import annotations

import numpy as np
import pytest
from byoc_support import BYOC, EXPECTED, MANIFEST, fixture_set
from cuda_fakes import build_fakes, calls, run_artifact, run_fake
from cuda_numerics import assert_matches, tf32_in_effect

import tvm.backend.cuda as hook
from conftest import run_python

FUNCTIONS = MANIFEST["artifacts"]["cudnn_cuda.so"]["functions"]
COMPILED_FUNCTIONS = fixture_set("byoc_compiled")[1]["artifacts"]["cudnn_cuda.so"]["functions"]
FUSED = "cudnnConvolutionBiasActivationForward"


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    return build_fakes()


def test_artifact_matches_numpy_and_every_call_is_checked(fakes):
    r = run_artifact(fakes, "cudnn", "cudnn_cuda.so", "cudnn")
    assert r["status"] == ""
    for func in FUNCTIONS:
        want = EXPECTED[f"cudnn_out:{func}"]
        tol = 1e-3 if want.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(
            np.array(r["outs"][func]), want.astype("float64"), rtol=tol, atol=tol, err_msg=func
        )
        text = r["logs"][func]
        assert "error:" not in text, text
        runs = calls(text, FUSED) + calls(text, "cudnnConvolutionForward")
        assert len(runs) == 2, text
        for run in runs:
            assert run["stream"] == "(nil)" and run["workspace"] != "(nil)"
            assert int(run["workspace_size"]) >= 4096
        assert len({run["handle"] for run in runs}) == 1
    # Every call destroyed its descriptors: what is left is this thread's handle on device 0.
    assert r["live"] == 1


def test_layouts_epilogues_and_algorithms(fakes):
    r = run_artifact(fakes, "cudnn", "cudnn_cuda.so", "cudnn")
    relu = calls(r["logs"]["nhwc_bias_relu"], FUSED)[0]
    assert (relu["format"], relu["act"], relu["x"], relu["w"]) == ("1", "relu", "1,4,8,8", "6,4,3,3")
    assert relu["algo"] == "2"  # the heuristic's first usable algorithm
    grouped = calls(r["logs"]["nchw_bias_grouped"], FUSED)[0]
    assert (grouped["format"], grouped["groups"], grouped["act"]) == ("0", "2", "identity")
    assert grouped["algo"] == "1"  # identity activation: IMPLICIT_PRECOMP_GEMM, as cuDNN requires
    half = calls(r["logs"]["half"], "cudnnConvolutionForward")[0]
    assert (half["dtype"], half["bias"]) == ("2", "(nil)")  # CUDNN_DATA_HALF, no bias


def test_current_stream_is_set_on_the_handle(fakes):
    r = run_fake(
        fakes,
        "cudnn",
        """
        g = Graph()
        x, w = g.input("x", (1, 2, 4, 4)), g.input("w", (3, 2, 3, 3))
        y = g.kernel("cudnn.conv2d.nhwc_ohwi", [x, w], (1, 3, 2, 2),
                     {"padding": [0, 0, 0, 0], "data_layout": "NCHW", "kernel_layout": "OIHW",
                      "out_layout": "NCHW"})
        f = module("cudnn_json", "sym", g, [y]).get_function("sym")
        out = tvm.runtime.empty((1, 3, 2, 2), "float32", dev)
        stream = dev.create_raw_stream()
        with tvm_ffi.use_raw_stream(dev, stream):
            f(on_device(np.ones((1, 2, 4, 4), "float32")), on_device(np.ones((3, 2, 3, 3), "float32")), out)
        result(stream=hex(stream), out=out.numpy().tolist(), log=log())
        """,
    )
    (run,) = calls(r["log"], "cudnnConvolutionForward")
    assert int(run["stream"], 16) == int(r["stream"], 16) != 0
    np.testing.assert_array_equal(r["out"], np.full((1, 3, 2, 2), 18.0))


BAD_GRAPHS = {
    "attention": ("cudnn.attention.BS3NH", {}, "attention (cudnn.attention.BS3NH) is not supported yet"),
    "layout": (
        "cudnn.conv2d.nhwc_ohwi",
        {"data_layout": "NHWC", "kernel_layout": "OIHW"},
        "layouts NHWC/OIHW",
    ),
    "asymmetric-padding": ("cudnn.conv2d.nhwc_ohwi", {"padding": [1, 0, 0, 1]}, "asymmetric padding"),
    "missing-bias": ("cudnn.conv2d.nhwc_ohwi_bias", {}, "takes data, weight and bias"),
    "output-size": ("cudnn.conv2d.nhwc_ohwi", {"strides": [2, 2]}, "output shape does not match"),
}


@pytest.mark.parametrize("case", list(BAD_GRAPHS.values()), ids=list(BAD_GRAPHS))
def test_unsupported_graphs_fail_at_init_with_the_reason(fakes, case):
    name, attrs, message = case
    r = run_fake(
        fakes,
        "cudnn",
        f"""
        g = Graph()
        x, w = g.input("x", (1, 2, 4, 4)), g.input("w", (3, 2, 3, 3))
        y = g.kernel({name!r}, [x, w], (1, 3, 2, 2), {attrs!r})
        result_of_building("cudnn_json", g, [y])
        """,
    )
    assert r["error"] and message in r["error"], r
    assert "Forward" not in r["log"]


def test_no_algorithm_is_a_clear_error(fakes):
    r = run_fake(
        fakes,
        "cudnn",
        """
        g = Graph()
        y = g.kernel("cudnn.conv2d.nhwc_ohwi", [g.input("x", (1, 2, 4, 4)), g.input("w", (3, 2, 3, 3))],
                     (1, 3, 2, 2), {"data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"})
        f = module("cudnn_json", "sym", g, [y]).get_function("sym")
        try:
            f(on_device(np.ones((1, 2, 4, 4), "float32")), on_device(np.ones((3, 2, 3, 3), "float32")),
              tvm.runtime.empty((1, 3, 2, 2), "float32", dev))
        except RuntimeError as err:
            result(error=str(err), live=live())
        """,
        FAKE_CUDNN_NO_ALGO="1",
    )
    assert "finding a convolution algorithm" in r["error"] and "CUDNN_STATUS_NOT_SUPPORTED" in r["error"]
    assert r["live"] == 1  # the failed call's descriptors were destroyed


def test_missing_cudnn_names_the_wheel(fakes):
    r = run_fake(
        fakes,
        "cudnn",
        """
        g = Graph()
        y = g.kernel("cudnn.conv2d.nhwc_ohwi", [g.input("x", (1, 2, 4, 4)), g.input("w", (3, 2, 3, 3))],
                     (1, 3, 2, 2), {"data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"})
        try:
            module("cudnn_json", "sym", g, [y]).get_function("sym")
        except RuntimeError as err:
            result(status=hook.cudnn_status(), error=str(err))
        """,
        TVM_CUDNN_LIBRARY="/nonexistent/libcudnn.so.9",
    )
    for text in (r["status"], r["error"]):
        assert 'pip install "tvm-runtime-cuda[cudnn]"' in text and "TVM_CUDNN_LIBRARY" in text


def test_locator_finds_the_cudnn_and_cudart_wheel_layouts(tmp_path, monkeypatch):
    for sub in ("nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cuda_runtime/lib/libcudart.so.12"):
        (tmp_path / sub).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / sub).write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert str(tmp_path / "nvidia/cudnn/lib/libcudnn.so.9") in hook.locate_library("cudnn")
    assert str(tmp_path / "nvidia/cuda_runtime/lib/libcudart.so.12") in hook.locate_library("cudart")


@pytest.mark.parametrize("artifact", ["cublas_cuda.so", "cudnn_cuda.so"])
def test_without_the_cuda_backend_the_load_names_the_wheel(artifact):
    """cublas_json and cudnn_json are declared by tvm-runtime-cuda: with the core alone, the
    artifact fails at load naming that wheel."""
    proc = run_python(
        f"""
        import tvm
        try:
            tvm.runtime.load_module({str(BYOC / artifact)!r})
        except RuntimeError as err:
            print("ERROR", err)
        """,
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    kind = artifact.split("_")[0] + "_json"
    assert f"Cannot load the '{kind}' module" in proc.stdout and "pip install tvm-runtime-cuda" in proc.stdout


# ---------------------------------------------------------------------------------- numerics
# The float32 policy (src/backends/cuda/byoc/tf32_policy.h, tests/byoc/cuda_numerics.py): unset as
# apache-tvm 0.27 (CUDNN_TENSOR_OP_MATH, TF32 allowed), 0 (CUDNN_FMA_MATH), 1 (as unset).
TENSOR_OP, FMA = "1", "3"  # cudnnMathType_t
POLICIES = {"unset": "", "0": "0", "1": "1"}


def compiled_run(fakes, policy: str, **env):
    return run_artifact(
        fakes, "cudnn", "cudnn_cuda.so", "cudnn", fixtures="byoc_compiled", TVM_CUDA_ALLOW_TF32=policy, **env
    )


@pytest.mark.parametrize("policy", list(POLICIES.values()), ids=list(POLICIES))
def test_math_type_follows_the_tf32_policy(fakes, policy):
    """What the descriptor asks for, what the heuristic answered, what ran (the fake computes on
    TF32-rounded operands when tensor-core math runs float32), and numpy within the tolerance the
    policy implies, on the convolutions apache-tvm 0.27's codegen made."""
    tf32 = tf32_in_effect("cudnn", {"TVM_CUDA_ALLOW_TF32": policy})
    assert tf32 == (policy != "0")
    r = compiled_run(fakes, policy)
    _, _, expected = fixture_set("byoc_compiled")
    for func in COMPILED_FUNCTIONS:
        want = expected[f"cudnn_out:{func}"]
        text = r["logs"][func]
        assert "error:" not in text, text
        fp32 = want.dtype == np.float32
        asked = [c["math"] for c in calls(text, "cudnnSetConvolutionMathType")]
        # First the policy's math type on every descriptor (half: tensor ops, as 0.27).
        assert asked[0] == (TENSOR_OP if tf32 or not fp32 else FMA), (func, text)
        runs = calls(text, FUSED) + calls(text, "cudnnConvolutionForward")
        assert len(runs) == 2, text
        for run in runs:
            if run["heuristic_math"] != "-1":  # chosen by the heuristic: its math type, as is
                assert run["math"] == run["heuristic_math"], (func, run)
            assert run["tf32"] == ("1" if tf32 and fp32 else "0"), (func, run)
        got = np.array(r["outs"][func])
        assert_matches(got, want, tf32=tf32, what=func, plain=1e-5, half=1e-3)
        if fp32:
            # The fake really rounds: TF32 results differ from numpy's beyond plain fp32 error.
            err = float(np.abs(got - want.astype("float64")).max())
            assert (err > 1e-4) == tf32, (func, err)


def test_strict_policy_skips_tf32_candidates_of_the_heuristic(fakes):
    """A heuristic that ranks a TF32 kernel first although FMA math was asked for: with
    TVM_CUDA_ALLOW_TF32=0 the FMA candidate after it runs; by default the TF32 one does."""
    strict = compiled_run(fakes, "0", FAKE_CUDNN_TF32_FIRST="1")
    default = compiled_run(fakes, "", FAKE_CUDNN_TF32_FIRST="1")
    for r, algo, math in ((strict, "1", FMA), (default, "2", TENSOR_OP)):
        (run, _) = calls(r["logs"]["nhwc_bias_relu"], FUSED)
        assert (run["algo"], run["math"], run["heuristic_math"]) == (algo, math, math), run
        assert run["tf32"] == ("1" if math == TENSOR_OP else "0")


def test_nvidia_tf32_override_wins_in_the_fake_as_in_cudnn(fakes):
    r = compiled_run(fakes, "", NVIDIA_TF32_OVERRIDE="0")
    run = calls(r["logs"]["nhwc_bias_relu"], FUSED)[0]
    assert (run["math"], run["tf32"]) == (TENSOR_OP, "0")


def test_invalid_tf32_policy_is_a_value_error_naming_the_variable(fakes):
    r = run_fake(
        fakes,
        "cudnn",
        """
        g = Graph()
        y = g.kernel("cudnn.conv2d.nhwc_ohwi", [g.input("x", (1, 2, 4, 4)), g.input("w", (3, 2, 3, 3))],
                     (1, 3, 2, 2), {"data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"})
        errors = []
        for _ in range(2):  # not cached: the same message again
            try:
                module("cudnn_json", "sym", g, [y]).get_function("sym")
            except ValueError as err:
                errors.append(str(err))
        result(errors=errors)
        """,
        TVM_CUDA_ALLOW_TF32="yes",
    )
    assert len(r["errors"]) == 2 and all("TVM_CUDA_ALLOW_TF32='yes'" in e for e in r["errors"]), r


def test_strict_policy_without_an_fma_candidate_says_what_to_do(fakes):
    """A heuristic that offers only TF32 kernels for a float32 convolution: under
    TVM_CUDA_ALLOW_TF32=0 the call fails naming the variable (never runs TF32 silently); by
    default the TF32 kernel runs."""
    body = """
        g = Graph()
        y = g.kernel("cudnn.conv2d.nhwc_ohwi", [g.input("x", (1, 2, 4, 4)), g.input("w", (3, 2, 3, 3))],
                     (1, 3, 2, 2), {"data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"})
        f = module("cudnn_json", "sym", g, [y]).get_function("sym")
        out = tvm.runtime.empty((1, 3, 2, 2), "float32", dev)
        try:
            f(on_device(np.ones((1, 2, 4, 4), "float32")), on_device(np.ones((3, 2, 3, 3), "float32")), out)
            result(error=None, log=log(), out=out.numpy().tolist())
        except RuntimeError as err:
            result(error=str(err), log=log(), live=live())
        """
    strict = run_fake(fakes, "cudnn", body, TVM_CUDA_ALLOW_TF32="0", FAKE_CUDNN_TF32_ONLY="1")
    assert "cuDNN offers no algorithm without TF32 tensor cores" in strict["error"], strict
    assert "TVM_CUDA_ALLOW_TF32=0" in strict["error"] and "Forward handle" not in strict["log"]
    assert strict["live"] == 1  # the failed call's descriptors were destroyed
    default = run_fake(fakes, "cudnn", body, TVM_CUDA_ALLOW_TF32="", FAKE_CUDNN_TF32_ONLY="1")
    (run,) = calls(default["log"], "cudnnConvolutionForward")
    assert (default["error"], run["math"], run["tf32"]) == (None, TENSOR_OP, "1")
    np.testing.assert_array_equal(default["out"], np.full((1, 3, 2, 2), 18.0))
