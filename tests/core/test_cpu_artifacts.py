"""Real apache-tvm 0.27 CPU artifacts (tests/artifacts/cpu) give numpy-matching results."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from conftest import ARTIFACTS, case, cases, run_kernel_call

CPU_CASES = cases("cpu")


@pytest.mark.parametrize("case_", CPU_CASES, ids=[c["name"] for c in CPU_CASES])
def test_cpu_artifact_matches_numpy(case_):
    assert case_["calls"], "every case has at least one call"
    for call in case_["calls"]:
        outputs = run_kernel_call(tvm, case_, call, tvm.cpu(0))
        assert outputs
        for key, out, expected in outputs:
            np.testing.assert_allclose(
                out.numpy(), expected, rtol=case_["rtol"], atol=case_["atol"], err_msg=key
            )


def test_required_artifact_kinds_are_covered():
    names = {c["name"] for c in CPU_CASES}
    assert {"add", "matmul", "row_sum", "dyn_muladd", "parallel_scale", "workspace", "multi_out"} <= names
    assert "__TVMBackendParallelLaunch" in case("cpu", "parallel_scale")["context_symbols"]
    assert "__TVMBackendAllocWorkspace" in case("cpu", "workspace")["context_symbols"]
    assert len(case("cpu", "dyn_muladd")["calls"]) == 2


def test_symbolic_shape_called_with_two_sizes_on_one_module():
    c = case("cpu", "dyn_muladd")
    sizes = set()
    for call in c["calls"]:
        for _key, out, expected in run_kernel_call(tvm, c, call, tvm.cpu(0)):
            sizes.add(out.shape[0])
            np.testing.assert_allclose(out.numpy(), expected, rtol=c["rtol"], atol=c["atol"])
    assert len(sizes) == 2


def test_parallel_kernel_with_several_thread_counts():
    from conftest import run_python

    c = case("cpu", "parallel_scale")
    for threads in ("1", "3"):
        proc = run_python(
            f"""
            import json, numpy as np, tvm, sys
            sys.path.insert(0, {str(ARTIFACTS.parent)!r})
            from conftest import case, run_kernel_call
            c = case("cpu", "parallel_scale")
            assert tvm.runtime.num_threads() == {threads}
            for _ in range(20):
                for call in c["calls"]:
                    for key, out, exp in run_kernel_call(tvm, c, call, tvm.cpu(0)):
                        np.testing.assert_allclose(out.numpy(), exp, rtol=c["rtol"], atol=c["atol"])
            print("ok")
            """,
            env={"TVM_NUM_THREADS": threads},
        )
        assert proc.stdout.strip() == "ok", proc.stderr
    assert c["name"] == "parallel_scale"


def test_workspace_kernel_repeated_calls_reuse_pool():
    c = case("cpu", "workspace")
    for _ in range(50):
        for _key, out, expected in run_kernel_call(tvm, c, c["calls"][0], tvm.cpu(0)):
            np.testing.assert_allclose(out.numpy(), expected, rtol=c["rtol"], atol=c["atol"])


def test_shape_mismatch_is_a_clear_python_error():
    c = case("cpu", "add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    a = tvm.runtime.tensor(np.zeros(7, "float32"))
    with pytest.raises(ValueError, match="shape"):
        mod[c["function"]](a, a, a)


def test_wrong_dtype_is_a_clear_python_error():
    c = case("cpu", "add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    a = tvm.runtime.tensor(np.zeros(1024, "int32"))
    with pytest.raises(TypeError):
        mod[c["function"]](a, a, a)


def test_time_evaluator_on_artifact():
    c = case("cpu", "tiny_add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    call = c["calls"][0]
    data = np.load(ARTIFACTS / call["npz"])
    args = []
    for arg in call["args"]:
        if arg["kind"] == "input":
            args.append(tvm.runtime.tensor(data[arg["key"]]))
        else:
            args.append(tvm.runtime.empty(arg["shape"], arg["dtype"]))
    result = mod.time_evaluator(c["function"], tvm.cpu(0), number=50, repeat=4, min_repeat_ms=1)(*args)
    assert len(result.results) == 4
    assert 0 < result.min <= result.median <= result.max < 0.01
    assert "mean (ms)" in str(result)


def test_config_threadpool_resizes_the_pool():
    from conftest import run_python

    proc = run_python(
        f"""
        import sys, numpy as np, tvm
        sys.path.insert(0, {str(ARTIFACTS.parent)!r})
        from conftest import case, run_kernel_call
        c = case("cpu", "parallel_scale")
        config = tvm.get_global_func("runtime.config_threadpool")
        for n in (3, 1, 2):
            config(0, n)
            assert tvm.runtime.num_threads() == n
            for key, out, exp in run_kernel_call(tvm, c, c["calls"][0], tvm.cpu(0)):
                np.testing.assert_allclose(out.numpy(), exp, rtol=c["rtol"], atol=c["atol"])
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok"


def test_time_evaluator_with_cache_flush():
    c = case("cpu", "matmul")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    call = c["calls"][0]
    data = np.load(ARTIFACTS / call["npz"])
    args = [
        tvm.runtime.tensor(data[a["key"]])
        if a["kind"] == "input"
        else tvm.runtime.empty(a["shape"], a["dtype"])
        for a in call["args"]
    ]
    timer = mod.time_evaluator(
        c["function"], tvm.cpu(0), number=3, repeat=2, f_preproc="cache_flush_cpu_non_first_arg"
    )
    assert len(timer(*args).results) == 2
    np.testing.assert_allclose(
        args[-1].numpy(), data[call["args"][-1]["key"]], rtol=c["rtol"], atol=c["atol"]
    )
