"""cublas_json and cudnn_json on a real GPU with the real cuBLASLt and cuDNN (from the NVIDIA pip
wheels): every function of the fixtures against numpy, the hand-assembled ones (byoc/) and those
apache-tvm's own codegens made (byoc_compiled/).  Skips without a GPU (CI), runs where one is
lent."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from backend_testing import device_or_skip
from byoc_support import fixture_set

import tvm
import tvm.backend.cuda as hook

CASES = {
    "cublas": ("cublas_cuda.so", hook.cublaslt_status, "cuBLASLt"),
    "cudnn": ("cudnn_cuda.so", hook.cudnn_status, "cuDNN"),
}


@pytest.mark.parametrize("fixtures", ["byoc", "byoc_compiled"])
@pytest.mark.parametrize("prefix", list(CASES))
def test_artifact_on_the_gpu_matches_numpy(prefix, fixtures):
    dev = device_or_skip(tvm, tvm.cuda(0), 2, "CUDA", fallback_reason="no CUDA device 0")
    artifact, status, name = CASES[prefix]
    if status():
        pytest.skip(f"{name} is not installed: {status()}")
    directory, manifest, expected = fixture_set(fixtures)
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(directory / artifact)), dev)
    major, minor = (int(v) for v in dev.compute_version.split("."))
    functions = manifest["artifacts"][artifact]["functions"]
    # fp8 GEMMs need Ada or newer (sm_89).
    functions = [f for f in functions if f != "dequantize" or (major, minor) >= (8, 9)]
    for func in functions:
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
        want = expected[f"{prefix}_out:{func}"]
        tol = 2e-3 if want.dtype == np.float16 else 1e-4
        np.testing.assert_allclose(
            got.astype("float64"), want.astype("float64"), rtol=tol, atol=tol, err_msg=func
        )
