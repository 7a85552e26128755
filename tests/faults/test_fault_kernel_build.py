"""Kernels that fail to build, from a real artifact file whose embedded source is broken: the
call through apache-tvm's host code raises with the compiler's log, the same call fails the same
way again (not a crash the second time), and every other module keeps running, including an
intact load of the same artifact.

(A crafted OpenCL payload that fails to build is tests/opencl/test_opencl_failures.py; NVRTC
errors on a source given directly are tests/cuda/test_cuda_nvrtc.py; a SPIR-V module the Vulkan
driver rejects is tests/vulkan/test_vulkan_failures.py.)
"""

from __future__ import annotations

import fakes
import numpy as np
import pytest
from fault_support import ADD_ARTIFACT, cuda_support, device, probe

import tvm

# Same length, so every offset in the library stays valid: `bad` is no type in OpenCL C or CUDA.
GOOD_LINE, BROKEN_LINE = b"  int cse_v1 = ", b"  bad cse_v1 = "


def broken_copy(kind: str, tmp_path) -> str:
    data = ADD_ARTIFACT[kind].read_bytes()
    assert data.count(GOOD_LINE) >= 1, "the fixture's kernel source changed; update GOOD_LINE"
    out = tmp_path / f"add_broken_{kind}.so"
    out.write_bytes(data.replace(GOOD_LINE, BROKEN_LINE, 1))
    return str(out)


def test_opencl_artifact_whose_kernel_fails_to_build(tmp_path):
    dev = device("opencl")
    a_np = np.arange(1024, dtype="float32")
    a, c = tvm.runtime.tensor(a_np, dev), tvm.runtime.empty((1024,), "float32", dev)
    broken = tvm.runtime.load_module(broken_copy("opencl", tmp_path))  # loading builds nothing
    for _ in range(2):
        with pytest.raises(RuntimeError) as info:
            broken["add"](a, a, c)
        msg = str(info.value)
        assert "OpenCL kernel 'add_kernel' failed to build" in msg and "CL_BUILD_PROGRAM_FAILURE" in msg
        assert "Build log:" in msg and "bad" in msg
    intact = tvm.runtime.load_module(str(ADD_ARTIFACT["opencl"]))
    intact["add"](a, a, c)
    np.testing.assert_array_equal(c.numpy(), a_np * 2)
    np.testing.assert_array_equal(a.numpy(), a_np)  # tensors allocated before stay valid


def test_cuda_artifact_whose_source_nvrtc_rejects(tmp_path):
    cuda_support().nvrtc_or_skip()  # CI installs NVRTC from pip and requires it
    fake = str(fakes.build("cuda"))
    r = probe(
        f"""
        dev = tvm.cuda(0)
        a = tvm.runtime.tensor(np.arange(1024, dtype="float32"), dev)
        c = tvm.runtime.empty((1024,), "float32", dev)
        broken = tvm.runtime.load_module({broken_copy("cuda", tmp_path)!r})
        errors = [error_of(lambda: broken["add"](a, a, c)) for _ in range(2)]
        intact = error_of(lambda: tvm.runtime.load_module(ADD["cuda"])["add"](a, a, c))
        result(errors=errors, intact=intact, kept=a.numpy().tolist() == list(range(1024)))
        """,
        env={"TVM_CUDA_DRIVER_LIBRARY": fake, "TVM_CUDA_CACHE_DIR": str(tmp_path / "cache")},
    )
    for msg in r["errors"]:
        assert msg.startswith("RuntimeError") and "NVRTC" in msg and "bad" in msg, msg
    assert r["intact"] is None, r["intact"]  # the fake driver accepts the intact image
    assert r["kept"]
