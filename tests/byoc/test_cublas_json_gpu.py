"""cublas_json on a real GPU with the real cuBLASLt (from the nvidia-cublas wheel): the fixture's
functions against numpy.  Skips without a GPU (CI), runs where one is lent."""

from __future__ import annotations

import numpy as np
import pytest
from backend_testing import device_or_skip
from byoc_support import BYOC, EXPECTED, MANIFEST

import tvm
import tvm.backend.cuda as hook

FUNCTIONS = MANIFEST["artifacts"]["cublas_cuda.so"]["functions"]


@pytest.fixture(scope="module")
def dev():
    d = device_or_skip(tvm, tvm.cuda(0), 2, "CUDA", fallback_reason="no CUDA device 0")
    status = hook.cublaslt_status()
    if status:
        pytest.skip(f"cuBLASLt is not installed: {status}")
    return d


def test_artifact_on_the_gpu_matches_numpy(dev):
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(BYOC / "cublas_cuda.so")), dev)
    major, minor = (int(v) for v in dev.compute_version.split("."))
    # fp8 GEMMs need Ada or newer (sm_89).
    funcs = [f for f in FUNCTIONS if f != "dequantize" or (major, minor) >= (8, 9)]
    for func in funcs:
        args = []
        for key in EXPECTED.files:
            if key.startswith(f"cublas:{func}:"):
                a = EXPECTED[key]
                if func == "dequantize":
                    t = tvm.runtime.empty(a.shape, "float8_e4m3fn", dev)
                    t.copyfrom(a)
                    args.append(t)
                else:
                    args.append(tvm.runtime.tensor(a, device=dev))
        got = vm[func](*args).numpy()
        want = EXPECTED[f"cublas_out:{func}"]
        tol = 2e-3 if want.dtype == np.float16 else 1e-4
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=tol, atol=tol, err_msg=func)
