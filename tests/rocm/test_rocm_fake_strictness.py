"""The fake HIP runtime refuses what HIP refuses, so the backend tests on it can fail where real
hardware would: each rejection of tests/fakes/fake_hip.c is called here directly
(ctypes, no tvm), once with what HIP accepts and once with what it refuses.

- a code object for another processor than the device's: hipErrorNoBinaryForGpu at load;
- a kernel name that is not exactly one of the code object's kernels: hipErrorNotFound;
- a packed argument buffer whose size does not match the kernel's `.kernarg_segment_size`
  (from the code object's own NT_AMDGPU_METADATA note): hipErrorInvalidValue at launch;
- copies between device and pinned memory complete only at a synchronization of their stream
  (a missing sync reads stale data); copies with pageable host memory are synchronous.

Each case runs in a fresh interpreter: the fake reads its settings once, at hipInit.
"""

from __future__ import annotations

import textwrap

import fakes
import pytest
from rocm_support import HERE

from conftest import REPO, child_result, run_python

HIP_ERROR_INVALID_VALUE = 1
HIP_ERROR_NO_BINARY_FOR_GPU = 209
HIP_ERROR_NOT_FOUND = 500
MACH_GFX942 = 0x4C

PRELUDE = f"""
import ctypes, json, os, struct, sys
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
from rocm_support import artifact, hip_payload_of
hip = ctypes.CDLL(os.environ["FAKE_HIP"])
hip.fake_hip_log.restype = ctypes.c_char_p
assert hip.hipInit(0) == 0
def code_of(name, mach=None):
    code = bytearray(hip_payload_of(artifact(name)).code)
    if mach is not None:  # e_flags: EF_AMDGPU_MACH in the low byte
        flags = int.from_bytes(code[48:52], "little")
        code[48:52] = ((flags & ~0xFF) | mach).to_bytes(4, "little")
    return bytes(code)
def load(code):
    mod = ctypes.c_void_p()
    return hip.hipModuleLoadData(ctypes.byref(mod), code), mod
def function(mod, name):
    f = ctypes.c_void_p()
    return hip.hipModuleGetFunction(ctypes.byref(f), mod, name.encode()), f
def launch(f, buffer):
    buf = ctypes.create_string_buffer(bytes(buffer), max(len(buffer), 1))
    size = ctypes.c_size_t(len(buffer))
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(buf), 2, ctypes.addressof(size), 3)
    return hip.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, None, None, extra)
def result(**kw):
    print("RESULT:" + json.dumps(kw))
"""


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("hip"))


def run_fake(fake: str, body: str, **env: str) -> dict:
    proc = run_python(PRELUDE + textwrap.dedent(body), env={"FAKE_HIP": fake, **env})
    return child_result(proc)


def test_code_object_for_another_processor_is_refused(fake):
    body = f"""
        rc_90a, _ = load(code_of("add"))
        rc_942, _ = load(code_of("add", mach={MACH_GFX942}))
        rc_1100, _ = load(code_of("add_gfx1100"))
        result(gfx90a=rc_90a, gfx942=rc_942, gfx1100=rc_1100, log=hip.fake_hip_log().decode())
        """
    on_90a = run_fake(fake, body, FAKE_HIP_ARCH="gfx90a:sramecc+:xnack-")
    assert on_90a["gfx90a"] == 0
    assert on_90a["gfx942"] == on_90a["gfx1100"] == HIP_ERROR_NO_BINARY_FOR_GPU
    assert "reason=arch image=gfx942 device_arch=gfx90a" in on_90a["log"]
    on_942 = run_fake(fake, body, FAKE_HIP_ARCH="gfx942:sramecc+:xnack-")
    assert on_942["gfx942"] == 0 and on_942["gfx90a"] == HIP_ERROR_NO_BINARY_FOR_GPU
    on_1100 = run_fake(fake, body, FAKE_HIP_ARCH="gfx1100")
    assert on_1100["gfx1100"] == 0 and on_1100["gfx90a"] == HIP_ERROR_NO_BINARY_FOR_GPU


def test_kernels_are_found_by_their_exact_name(fake):
    r = run_fake(
        fake,
        """
        rc, mod = load(code_of("workspace"))
        assert rc == 0
        names = ["workspace_kernel", "workspace_kernel_1", "workspace", "workspace_kernel_",
                 "workspace_kernel.kd", "orkspace_kernel", ""]
        result(codes={n: function(mod, n)[0] for n in names})
        """,
    )
    assert r["codes"] == {
        "workspace_kernel": 0,
        "workspace_kernel_1": 0,
        "workspace": HIP_ERROR_NOT_FOUND,
        "workspace_kernel_": HIP_ERROR_NOT_FOUND,
        "workspace_kernel.kd": HIP_ERROR_NOT_FOUND,
        "orkspace_kernel": HIP_ERROR_NOT_FOUND,
        "": HIP_ERROR_NOT_FOUND,
    }


def test_argument_buffer_must_match_the_kernarg_segment(fake):
    # multi_out_kernel(A, B, O.v0, O.v1, float alpha, int beta): .kernarg_segment_size 40.
    r = run_fake(
        fake,
        """
        rc, mod = load(code_of("multi_out"))
        rc, f = function(mod, "multi_out_kernel")
        assert rc == 0
        result(codes={n: launch(f, bytes(n)) for n in (40, 3, 0, 36, 48)},
               log=hip.fake_hip_log().decode())
        """,
    )
    assert r["codes"] == {
        "40": 0,
        "3": HIP_ERROR_INVALID_VALUE,
        "0": HIP_ERROR_INVALID_VALUE,
        "36": HIP_ERROR_INVALID_VALUE,
        "48": HIP_ERROR_INVALID_VALUE,
    }
    assert "launch_rejected kernel=multi_out_kernel reason=kernarg_size size=3 expected=40..40" in r["log"]


def test_pinned_copies_land_at_the_stream_sync(fake):
    r = run_fake(
        fake,
        """
        n = 64
        dev, pinned, other = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        assert hip.hipMalloc(ctypes.byref(dev), n) == 0
        assert hip.hipMalloc(ctypes.byref(other), n) == 0
        assert hip.hipHostMalloc(ctypes.byref(pinned), n, 0) == 0
        ctypes.memset(pinned, 0, n)
        src = ctypes.create_string_buffer(b"x" * n, n)      # pageable
        assert hip.hipMemcpyAsync(dev, src, n, 1, None) == 0  # pageable -> device: synchronous
        src.raw = b"y" * n                                  # staged at the call: no effect
        assert hip.hipMemcpyAsync(pinned, dev, n, 2, None) == 0  # device -> pinned: queued
        before = ctypes.string_at(pinned, n)
        pending = hip.fake_hip_pending_ops()
        assert hip.hipStreamSynchronize(None) == 0
        after = ctypes.string_at(pinned, n)
        assert hip.hipMemcpyAsync(other, dev, n, 3, None) == 0  # device -> device: queued
        back = ctypes.create_string_buffer(n)
        assert hip.hipMemcpyAsync(back, other, n, 2, None) == 0  # -> pageable: waits for it
        result(before=before.decode(), pending=pending, after=after.decode(),
               back=back.raw.decode(), left=hip.fake_hip_pending_ops())
        """,
    )
    assert r["before"] == "\0" * 64 and r["pending"] == 1
    assert r["after"] == "x" * 64
    assert r["back"] == "x" * 64 and r["left"] == 0


def test_event_sync_and_free_complete_the_queue(fake):
    r = run_fake(
        fake,
        """
        n = 16
        dev, pinned = ctypes.c_void_p(), ctypes.c_void_p()
        hip.hipMalloc(ctypes.byref(dev), n)
        hip.hipHostMalloc(ctypes.byref(pinned), n, 0)
        ctypes.memset(pinned, 0, n)
        hip.hipMemcpyAsync(dev, ctypes.create_string_buffer(b"e" * n, n), n, 1, None)
        stream, event = ctypes.c_void_p(), ctypes.c_void_p()
        hip.hipStreamCreateWithFlags(ctypes.byref(stream), 1)
        hip.hipEventCreateWithFlags(ctypes.byref(event), 0)
        hip.hipMemcpyAsync(pinned, dev, n, 2, stream)
        hip.hipEventRecord(event, stream)
        queued = ctypes.string_at(pinned, n)
        hip.hipEventSynchronize(event)
        synced = ctypes.string_at(pinned, n)
        ctypes.memset(pinned, 0, n)
        hip.hipMemcpyAsync(pinned, dev, n, 2, stream)
        hip.hipFree(dev)  # hipFree waits for the device
        freed = ctypes.string_at(pinned, n)
        result(queued=queued.decode(), synced=synced.decode(), freed=freed.decode())
        """,
    )
    assert r["queued"] == "\0" * 16
    assert r["synced"] == r["freed"] == "e" * 16
