"""cublas_json and cudnn_json on a real GPU with the real cuBLASLt and cuDNN (from the NVIDIA pip
wheels): every function of the fixtures against numpy, the hand-assembled ones (byoc/) and those
apache-tvm's own codegens made (byoc_compiled/), one test per function so a failure hides nothing.

Each library runs under two float32 policies (cuda_numerics.py): apache-tvm 0.27's default, and the
setting of $TVM_CUDA_ALLOW_TF32 that changes it for that library (cuDNN: 0, no TF32; cuBLASLt: 1,
TF32 allowed); the tolerances follow the policy.  The policy is read once per process, so each
(policy, fixture set, library) runs its functions in one child process, whose results the tests
of its functions share.  Skips without a GPU (CI), runs where one is lent.  Rehearsed without a
GPU on the fakes (which emulate TF32 rounding): TVM_CUDA_DRIVER_LIBRARY, TVM_CUBLASLT_LIBRARY and
TVM_CUDNN_LIBRARY set to tests/fakes/fake_{cuda,cublaslt,cudnn}.c built as shared
libraries, FAKE_CUDA_CC=9.0: all 36 pass in ~6 s."""

from __future__ import annotations

import functools
import json
import os

import numpy as np
import pytest
from backend_testing.devices import device_or_skip
from byoc_support import fixture_set
from cuda_numerics import GELU_FUNCTIONS, TF32_ENV, assert_matches, tf32_in_effect

import tvm
import tvm.backend.cuda as hook
from conftest import run_python

CASES = {
    "cublas": ("cublas_cuda.so", hook.cublaslt_status, "cuBLASLt"),
    "cudnn": ("cudnn_cuda.so", hook.cudnn_status, "cuDNN"),
}
# The policies each library runs under: None is apache-tvm 0.27's default (the variable unset).
POLICIES = {"cublas": [None, "1"], "cudnn": [None, "0"]}

CHILD = """
import ctypes, json, sys
import numpy as np
import tvm
directory, artifact, prefix, functions, out = sys.argv[1:6]
dev = tvm.cuda(0)
vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(f"{directory}/{artifact}"), dev)
expected = np.load(f"{directory}/expected.npz")
results = {}
for func in json.loads(functions):
    try:
        args = []
        for key in expected.files:
            if key.startswith(f"{prefix}:{func}:"):
                a = expected[key]
                if func == "dequantize":  # the fp8 bytes (numpy has no float8)
                    t = tvm.runtime.empty(a.shape, "float8_e4m3fn", dev)
                    copy = tvm.get_global_func("runtime.TVMTensorCopyFromBytes")
                    copy(t, a.ctypes.data_as(ctypes.c_void_p), a.nbytes)
                    args.append(t)
                else:
                    args.append(tvm.runtime.tensor(a, device=dev))
        got = vm[func](*args).numpy()
        np.save(f"{out}/{func}.npy", got)
        results[func] = ""
    except Exception as e:  # reported by that function's test, the others still run
        results[func] = f"{type(e).__name__}: {e}"
print("RESULT:" + json.dumps(results))
"""


def _params():
    out = []
    for prefix, (artifact, _, _) in CASES.items():
        for fixtures in ("byoc", "byoc_compiled"):
            _, manifest, _ = fixture_set(fixtures)
            for policy in POLICIES[prefix]:
                for func in manifest["artifacts"][artifact]["functions"]:
                    tag = "default" if policy is None else f"{TF32_ENV}={policy}"
                    test_id = f"{prefix}-{fixtures}-{tag}-{func}"
                    out.append(pytest.param(prefix, fixtures, policy, func, id=test_id))
    return out


@functools.cache
def _run_child(prefix: str, fixtures: str, policy: str | None, out_dir: str) -> tuple[dict, dict[str, str]]:
    """Runs every function of one artifact in a child with the policy; (child env, errors)."""
    directory, manifest, _ = fixture_set(fixtures)
    artifact = CASES[prefix][0]
    functions = manifest["artifacts"][artifact]["functions"]
    env = {k: v for k, v in os.environ.items() if k != TF32_ENV}
    if policy is not None:
        env[TF32_ENV] = policy
    argv = [str(directory), artifact, prefix, json.dumps(functions), out_dir]
    code = f"import sys; sys.argv[1:] = {argv!r}\n"
    # run_python merges os.environ: remove the variable there by setting it to the empty string,
    # which the runtime reads as unset.
    proc = run_python(code + CHILD, env={**env, TF32_ENV: env.get(TF32_ENV, "")})
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")][-1]
    return env, json.loads(line[len("RESULT:") :])


@pytest.mark.parametrize(("prefix", "fixtures", "policy", "func"), _params())
def test_function_on_the_gpu_matches_numpy(prefix, fixtures, policy, func, tmp_path_factory):
    dev = device_or_skip(tvm, tvm.cuda(0), 2, "CUDA", fallback_reason="no CUDA device 0")
    artifact, status, name = CASES[prefix]
    if status():
        pytest.skip(f"{name} is not installed: {status()}")
    major, minor = (int(v) for v in dev.compute_version.split("."))
    if func == "dequantize" and (major, minor) < (8, 9):
        pytest.skip("fp8 GEMMs need Ada or newer (sm_89)")
    out_dir = _out_dir(tmp_path_factory, prefix, fixtures, policy)
    env, errors = _run_child(prefix, fixtures, policy, out_dir)
    assert errors[func] == "", errors[func]
    _, _, expected = fixture_set(fixtures)
    got = np.load(f"{out_dir}/{func}.npy")
    want = expected[f"{prefix}_out:{func}"]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
    assert_matches(
        got,
        want,
        tf32=tf32_in_effect(prefix, env),
        gelu=prefix == "cublas" and func in GELU_FUNCTIONS,
        what=f"{prefix}:{fixtures}:{func}",
    )


_OUT_DIRS: dict[tuple, str] = {}


def _out_dir(factory, prefix: str, fixtures: str, policy: str | None) -> str:
    key = (prefix, fixtures, policy)
    if key not in _OUT_DIRS:
        _OUT_DIRS[key] = str(factory.mktemp(f"gpu-{prefix}-{fixtures}-{policy or 'default'}"))
    return _OUT_DIRS[key]
