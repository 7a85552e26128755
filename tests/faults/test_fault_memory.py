"""Device allocation failures (out of memory) on every device: a clear RuntimeError, tensors
allocated before stay valid, and the device keeps allocating and running kernels afterwards.

CPU, OpenCL (PoCL) and Vulkan (lavapipe) are asked for more than any machine has; the fake
OpenCL and CUDA drivers refuse an allocation the way a full GPU does
(CL_MEM_OBJECT_ALLOCATION_FAILURE, CUDA_ERROR_OUT_OF_MEMORY).
"""

from __future__ import annotations

import fakes
import numpy as np
import pytest
from fault_support import ADD_ARTIFACT, device, probe

import tvm

HUGE = 1 << 50  # 1 PiB: no machine has it, and Linux refuses it even with overcommit


def run_add(dev, kind: str) -> None:
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((2, 1024)).astype("float32")
    mod = tvm.runtime.load_module(str(ADD_ARTIFACT[kind]))
    c = tvm.runtime.empty((1024,), "float32", dev)
    mod["add"](tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev), c)
    np.testing.assert_array_equal(c.numpy(), a_np + b_np)


@pytest.mark.parametrize("kind", ["cpu", "opencl", "vulkan"])
def test_allocation_larger_than_the_machine(kind):
    # Devices absent on this machine skip with the driver's reason (the skip budget's category
    # is a GPU; CI requires OpenCL and Vulkan, so there they never skip).
    dev = device(kind)
    kept = tvm.runtime.tensor(np.arange(4096, dtype="float32"), dev)
    for shape, dtype in [((HUGE,), "uint8"), ((1 << 25, 1 << 25), "float32")]:
        with pytest.raises(RuntimeError) as info:
            tvm.runtime.empty(shape, dtype, dev)
        msg = str(info.value)
        assert str(int(np.prod(shape)) * np.dtype(dtype).itemsize) in msg.replace(",", ""), msg
    np.testing.assert_array_equal(kept.numpy(), np.arange(4096, dtype="float32"))
    run_add(dev, kind)  # the device still allocates and runs kernels


@pytest.mark.parametrize("kind", ["cpu", "opencl", "vulkan"])
def test_shape_whose_byte_size_overflows(kind):
    dev = device(kind)
    for shape in [(1 << 62, 1 << 62), (1 << 31, 1 << 31, 1 << 31, 4)]:
        with pytest.raises((RuntimeError, ValueError)):
            tvm.runtime.empty(shape, "float32", dev)
    run_add(dev, kind)


def test_repeated_failures_leave_nothing_behind():
    # Failing allocations interleaved with real ones: the CPU pool keeps working and the tensors
    # keep their contents (a failure path that freed the wrong block would show here).
    dev = tvm.cpu(0)
    kept = []
    for i in range(50):
        with pytest.raises(RuntimeError):
            tvm.runtime.empty((HUGE,), "uint8", dev)
        kept.append(tvm.runtime.tensor(np.full(257, i, dtype="int32"), dev))
    for i, t in enumerate(kept):
        assert (t.numpy() == i).all()


# ---------------------------------------------------------------------------- fake drivers


def test_opencl_driver_out_of_memory(tmp_path):
    fake = str(fakes.build("opencl"))
    r = probe(
        """
        dev = tvm.opencl(0)
        kept = tvm.runtime.tensor(np.arange(1000, dtype="float32"), dev)
        oom = error_of(lambda: tvm.runtime.empty((32 << 20,), "float32", dev))  # 128 MiB > 64 MiB
        again = tvm.runtime.tensor(np.arange(1000, dtype="float32") * 2, dev)
        copy = kept.copyto(dev)
        build = error_of(lambda: run_add("opencl"))
        result(name=dev.device_name, oom=oom, kept=kept.numpy().tolist() == list(range(1000)),
               again=bool((again.numpy() == np.arange(1000) * 2).all()),
               copy=copy.numpy().tolist() == list(range(1000)), build=build)
        """,
        env={"TVM_OPENCL_LIBRARY": fake, "FAKE_CL_MEMORY": str(64 << 20)},
    )
    assert r["name"] == "Fake OpenCL Device"
    assert r["oom"].startswith("RuntimeError") and "CL_MEM_OBJECT_ALLOCATION_FAILURE" in r["oom"], r["oom"]
    assert "134217728" in r["oom"], "the message names the size that failed"
    assert r["kept"] and r["again"] and r["copy"]
    # This driver compiles nothing: a real artifact's kernel fails to build, with the log.
    assert r["build"].startswith("RuntimeError") and "fake: this driver compiles nothing" in r["build"]


def test_cuda_driver_out_of_memory(tmp_path):
    fake = str(fakes.build("cuda"))
    r = probe(
        """
        import ctypes, gc, os
        lib = ctypes.CDLL(os.environ["TVM_CUDA_DRIVER_LIBRARY"])
        lib.fake_cuda_live_allocations.restype = ctypes.c_long
        dev = tvm.cuda(0)
        kept = tvm.runtime.tensor(np.arange(1000, dtype="float32"), dev)
        live = lib.fake_cuda_live_allocations()
        oom = [error_of(lambda: tvm.runtime.empty((1 << 41,), "uint8", dev)) for _ in range(3)]
        after = lib.fake_cuda_live_allocations()
        again = tvm.runtime.tensor(np.arange(1000, dtype="float32") * 2, dev)
        result(oom=oom, live=live, after=after, kept=kept.numpy().tolist() == list(range(1000)),
               again=bool((again.numpy() == np.arange(1000) * 2).all()))
        """,
        env={"TVM_CUDA_DRIVER_LIBRARY": fake},
    )
    for msg in r["oom"]:
        assert msg.startswith("RuntimeError") and "out of memory on CUDA device 0" in msg, msg
    assert r["after"] == r["live"], "a failed allocation must not leave a driver allocation behind"
    assert r["kept"] and r["again"]
