"""The fake CUDA driver is as strict as the real one where it matters, and the runtime copes.

Each check of tests/fakes/fake_cuda.c that refuses a call is made to fire here
(a meta-test of the fake): through the runtime where a user could cause it, with the error
reaching Python with the driver's error name and what was being done; directly through ctypes
where the runtime (correctly) never does it.  Every refusal also logs
"rejected call=<entry point> reason=<why>", so each test checks exactly that rejection fired.

The runtime behaviour these checks exposed is tested too: pinned host memory (cuda_host)
synchronizes with the device copies that write it, the dynamic shared memory opt-in is
race-free between threads, and events are used in their own context.
"""

from __future__ import annotations

import struct
import textwrap

import fakes
import pytest
from fakes import parse_log

# The fresh-interpreter runner of the fake driver tests.
from test_cuda_fake_driver import run_fake, with_ptx_kernels


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("cuda"))


# ------------------------------------------------------------------------ helpers

# The driver's entry points called directly (ctypes), for checks the runtime never triggers.
DIRECT = """
cu = ctypes.CDLL(os.environ["TVM_CUDA_DRIVER_LIBRARY"])
P = ctypes.c_void_p
def ok(rc, what):
    assert rc == 0, (what, rc)
def make_current(device):
    ctx = P()
    ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), device), "retain")
    ok(cu.cuCtxSetCurrent(ctx), "set current")
    return ctx
def load_function(ptx, name):
    mod, fn = P(), P()
    ok(cu.cuModuleLoadDataEx(ctypes.byref(mod), ptx.encode(), 0, None, None), "load")
    ok(cu.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), "get function")
    return fn
def launch(fn, grid, block, smem, stream=None):
    return cu.cuLaunchKernel(fn, *[ctypes.c_uint(v) for v in grid + block], ctypes.c_uint(smem),
                             P(stream), None, None)
def rejections():
    return [(r["call"], r["reason"]) for r in parse_log(log(), "rejected")]
ok(cu.cuInit(0), "init")
"""


def direct(body: str) -> str:
    return DIRECT + textwrap.dedent(body)


def rejected(r: dict) -> list[list[str]]:
    return [[x["call"], x["reason"]] for x in parse_log(r["log"], "rejected")]


def fake_cubin(kernel: str, sm: int, new_abi: bool = True) -> bytes:
    """A minimal CUDA ELF holding section `.text.<kernel>`, for sm_<sm>: what the fake reads of a
    cubin (CUDA 13's OS/ABI 0x41 keeps the SM in e_flags bits 8-15, CUDA 12's 0x33 in bits 0-7)."""
    names = b"\0.shstrtab\0.text." + kernel.encode() + b"\0"
    text = b"\0" * 16
    shoff = 64 + len(names) + len(text)
    osabi, abiversion, flags = (0x41, 8, sm << 8) if new_abi else (0x33, 7, sm | (sm << 16))
    header = b"\x7fELF" + bytes([2, 1, 1, osabi, abiversion]) + b"\0" * 7
    header += struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, flags, 64, 0, 0, 64, 3, 1)

    def section(name, kind, offset, size):
        return struct.pack("<IIQQQQIIQQ", name, kind, 0, 0, offset, size, 0, 0, 1, 0)

    sections = section(0, 0, 0, 0) + section(1, 3, 64, len(names))
    sections += section(names.index(b".text."), 1, 64 + len(names), len(text))
    return header + names + text + sections


def load_and_launch(kernel: str, image: str, fmt: str, table_name: str | None = None) -> str:
    """Script: a module of one kernel `table_name` (default `kernel`) with the given image; one
    launch; RESULT has the error message (or None) and the log."""
    name = table_name or kernel
    return f"""
        kernels = [Kernel({name!r}, [HANDLE], ["blockIdx.x", "threadIdx.x"])]
        mod = load_payload(write_cuda_payload(kernels, {image}, fmt={fmt!r}))
        buf = tvm.runtime.empty((64,), "float32", tvm.cuda(0))
        msg = None
        try:
            mod[{name!r}](buf, 1, 32)
        except RuntimeError as err:
            msg = str(err)
        result(msg=msg, log=log())
        """


# ------------------------------------------------------------------------ asynchronous queues


def test_copies_complete_only_at_a_synchronization_point(fake):
    # The fake itself: an asynchronous copy is not visible until its stream is synchronized.
    r = run_fake(
        fake,
        direct(
            """
        make_current(0)
        src = (ctypes.c_float * 4)(1, 2, 3, 4)
        back = (ctypes.c_float * 4)()
        dptr = ctypes.c_uint64()
        ok(cu.cuMemAlloc_v2(ctypes.byref(dptr), 16), "alloc")
        ok(cu.cuMemcpyHtoDAsync_v2(dptr, src, ctypes.c_size_t(16), None), "htod")
        src[0] = 99  # the driver staged the pageable source at the call
        ok(cu.cuMemcpyDtoHAsync_v2(back, dptr, ctypes.c_size_t(16), None), "dtoh")
        before, pending = list(back), fake.fake_cuda_pending_ops()
        ok(cu.cuStreamSynchronize(None), "sync")
        result(before=before, pending=pending, after=list(back), left=fake.fake_cuda_pending_ops())
        """
        ),
    )
    assert r["before"] == [0, 0, 0, 0] and r["pending"] == 2
    assert r["after"] == [1, 2, 3, 4] and r["left"] == 0


def test_event_wait_and_event_sync_apply_the_recorded_work(fake):
    r = run_fake(
        fake,
        direct(
            """
        make_current(0)
        s1, s2, ev = P(), P(), P()
        ok(cu.cuStreamCreate(ctypes.byref(s1), 1), "stream 1")
        ok(cu.cuStreamCreate(ctypes.byref(s2), 1), "stream 2")
        ok(cu.cuEventCreate(ctypes.byref(ev), 2), "event")
        dptr = ctypes.c_uint64()
        ok(cu.cuMemAlloc_v2(ctypes.byref(dptr), 4), "alloc")
        src, back = ctypes.c_int(7), ctypes.c_int(0)
        ok(cu.cuMemcpyHtoDAsync_v2(dptr, ctypes.byref(src), ctypes.c_size_t(4), s1), "htod")
        ok(cu.cuEventRecord(ev, s1), "record")
        ok(cu.cuStreamWaitEvent(s2, ev, 0), "wait")
        ok(cu.cuMemcpyDtoHAsync_v2(ctypes.byref(back), dptr, ctypes.c_size_t(4), s2), "dtoh")
        unsynced = back.value
        ok(cu.cuEventRecord(ev, s2), "record 2")
        ok(cu.cuEventSynchronize(ev), "event sync")
        result(unsynced=unsynced, synced=back.value)
        """
        ),
    )
    assert r["unsynced"] == 0 and r["synced"] == 7


def test_pinned_memory_sync_waits_for_the_device_copy(fake):
    # GPU -> cuda_host is queued; a sync of cuda_host (no stream, or the stream used) must wait
    # for it.  The raw view of the pinned buffer shows the fake really completes it late.
    r = run_fake(
        fake,
        """
        dev, host = tvm.cuda(0), tvm.device(3, 0)
        n = 4096
        x = np.arange(1, n + 1, dtype="float32")
        g = tvm.runtime.tensor(x, dev)
        pinned = tvm.runtime.empty((n,), "float32", host)
        pinned.copyfrom(np.zeros(n, "float32"))
        raw = np.ctypeslib.as_array((ctypes.c_float * n).from_address(pinned.data_ptr()))
        g.copyto(pinned)
        stale = bool((raw == 0).all())
        host.sync()
        after_sync = bool((raw == x).all())

        # Through a user's stream, synchronized explicitly (the runtime finds its context).
        s = dev.create_raw_stream()
        dev.set_raw_stream(s)
        pinned.copyfrom(np.zeros(n, "float32"))
        (g2 := tvm.runtime.tensor(2 * x, dev)).copyto(pinned)
        stale_on_stream = bool((raw == 0).all())
        tvm.get_global_func("runtime.Device_StreamSync")(host, s)
        after_stream_sync = bool((raw == 2 * x).all())

        # A host read of pinned memory (numpy()) waits by itself.
        tvm.runtime.tensor(3 * x, dev).copyto(pinned)
        read = bool((pinned.numpy() == 3 * x).all())
        dev.set_raw_stream(0)
        dev.free_raw_stream(s)
        result(stale=stale, after_sync=after_sync, stale_on_stream=stale_on_stream,
               after_stream_sync=after_stream_sync, read=read, log=log())
        """,
    )
    assert r["stale"] and r["stale_on_stream"], "the fake completed a queued copy early"
    assert r["after_sync"] and r["after_stream_sync"] and r["read"]
    assert rejected(r) == []


# ------------------------------------------------------------------------ context-bound handles


def test_stream_of_another_device_is_refused(fake):
    r = run_fake(
        fake,
        """
        s1 = tvm.cuda(1).create_raw_stream()
        tvm.cuda(0).set_raw_stream(s1)  # a user error: device 1's stream as device 0's
        try:
            tvm.runtime.tensor(np.ones(4, "float32"), tvm.cuda(0))
            msg = None
        except RuntimeError as err:
            msg = str(err)
        result(msg=msg, log=log())
        """,
        FAKE_CUDA_DEVICES="2",
    )
    assert "cuMemcpyHtoDAsync failed: CUDA_ERROR_INVALID_HANDLE" in r["msg"], r["msg"]
    assert rejected(r) == [["cuMemcpyHtoDAsync", "stream_of_another_context"]]


def test_destroyed_stream_is_refused(fake):
    r = run_fake(
        fake,
        """
        dev = tvm.cuda(0)
        s = dev.create_raw_stream()
        dev.free_raw_stream(s)
        dev.set_raw_stream(s)
        try:
            tvm.runtime.tensor(np.ones(4, "float32"), dev)
            msg = None
        except RuntimeError as err:
            msg = str(err)
        result(msg=msg, log=log())
        """,
    )
    assert "cuMemcpyHtoDAsync failed: CUDA_ERROR_INVALID_HANDLE" in r["msg"], r["msg"]
    assert rejected(r) == [["cuMemcpyHtoDAsync", "destroyed_stream"]]


def test_events_are_used_in_their_own_context(fake):
    # Events of device 1 waited on, timed and destroyed while device 0 is current, and from a
    # thread with no context at all: the runtime makes the event's context current each time.
    # The same calls made directly with the wrong (or no) context are what the fake refuses.
    r = run_fake(
        fake,
        direct(
            """
        set_device = tvm.get_global_func("__tvm_set_device")
        start, end = hook.Event(tvm.cuda(1)), hook.Event(tvm.cuda(1))
        start.record(); end.record()
        set_device(2, 0)
        ms = start.elapsed_time(end)
        end.synchronize()
        wrong = cu.cuEventSynchronize(P(end.handle))
        no_ctx = []
        t = threading.Thread(target=lambda: no_ctx.append(cu.cuEventSynchronize(P(end.handle))))
        t.start(); t.join()
        rejected_calls = rejections()
        clear()
        errors = []
        def in_thread():
            try:
                start.synchronize()
                start.elapsed_time(end)
                del_events()
            except Exception as err:
                errors.append(str(err))
        def del_events():
            global start, end
            del start, end
            gc.collect()
        t = threading.Thread(target=in_thread)
        t.start(); t.join()
        result(ms=ms, wrong=wrong, no_ctx=no_ctx[0], rejected_calls=rejected_calls,
               errors=errors, log=log())
        """
        ),
        FAKE_CUDA_DEVICES="2",
    )
    assert r["ms"] == 1.25
    assert r["wrong"] == 400 and r["no_ctx"] == 201  # INVALID_HANDLE, INVALID_CONTEXT
    assert r["rejected_calls"] == [
        ["cuEventSynchronize", "event_of_another_context"],
        ["cuEventSynchronize", "no_current_context"],
    ]
    assert r["errors"] == [] and rejected(r) == []
    assert r["log"].count("event_destroy") == 2


def test_event_without_timing_refuses_elapsed_time(fake):
    r = run_fake(
        fake,
        """
        start = hook.Event(tvm.cuda(0), enable_timing=False)
        end = hook.Event(tvm.cuda(0), enable_timing=False)
        start.record(); end.record()
        try:
            start.elapsed_time(end)
            msg = None
        except RuntimeError as err:
            msg = str(err)
        result(msg=msg, log=log())
        """,
    )
    assert "cuEventElapsedTime" in r["msg"] and "CUDA_ERROR_INVALID_HANDLE" in r["msg"], r["msg"]
    assert "created with timing enabled" in r["msg"]
    assert rejected(r) == [["cuEventElapsedTime", "event_without_timing"]]


# ------------------------------------------------------------------------ launch validation


def launch_scalars(dims: tuple[int, int, int, int, int, int]) -> str:
    return with_ptx_kernels(
        f"""
        clear()
        try:
            mod["scalars"](buf, 0, 0, 0, 0.0, 0.0, *{dims!r})
            msg = None
        except RuntimeError as err:
            msg = str(err)
        result(msg=msg, log=log())
        """
    )


def test_launch_limits_are_enforced(fake):
    # (grid x, y, z, block x, y, z) -> the fake's reason; each reaches Python as the launch's
    # error with the driver's code.
    cases = {
        (1, 1, 1, 32, 32, 128): "block_dimension_limit",
        (1, 1, 1, 2048, 1, 1): "block_dimension_limit",
        (1, 1, 1, 64, 32, 1): "threads_per_block_limit",
        (1, 70000, 1, 32, 1, 1): "grid_dimension_limit",
        (1, 1, 65536, 32, 1, 1): "grid_dimension_limit",
        (2**31, 1, 1, 32, 1, 1): "grid_dimension_limit",
    }
    for dims, reason in cases.items():
        r = run_fake(fake, launch_scalars(dims))
        assert r["msg"] is not None, dims
        assert "launch of CUDA kernel 'scalars'" in r["msg"], r["msg"]
        assert "CUDA_ERROR_INVALID_VALUE" in r["msg"], r["msg"]
        assert rejected(r) == [["cuLaunchKernel", reason]], (dims, r["log"])
    # A launch value <= 0 is taken as 1 by the runtime (as by apache-tvm): no zero dimension
    # reaches the driver from compiled code.
    r = run_fake(fake, launch_scalars((0, 1, 1, 32, 0, 1)))
    assert r["msg"] is None and rejected(r) == []
    assert "grid=1,1,1 block=32,1,1" in r["log"]
    # The largest valid values launch.
    r = run_fake(fake, launch_scalars((2**31 - 1, 65535, 65535, 1024, 1, 1)))
    assert r["msg"] is None and rejected(r) == []
    r = run_fake(fake, launch_scalars((1, 1, 1, 16, 1, 64)))
    assert r["msg"] is None and rejected(r) == []


def test_zero_launch_dimensions_are_refused(fake):
    # Directly (the runtime never passes a zero, see above): the driver's CUDA_ERROR_INVALID_VALUE.
    r = run_fake(
        fake,
        direct(
            """
        make_current(0)
        fn = load_function(fake_ptx(["k"]), "k")
        codes = [launch(fn, [0, 1, 1], [32, 1, 1], 0), launch(fn, [1, 1, 1], [32, 0, 1], 0)]
        result(codes=codes, log=log())
        """
        ),
    )
    assert r["codes"] == [1, 1]
    assert rejected(r) == [
        ["cuLaunchKernel", "zero_grid_dimension"],
        ["cuLaunchKernel", "zero_block_dimension"],
    ]


def test_dynamic_shared_memory_needs_the_opt_in(fake):
    # Directly: above 48 KiB without cuFuncSetAttribute, above the function's raised limit, and
    # a raise above the device's opt-in maximum are refused.
    r = run_fake(
        fake,
        direct(
            """
        make_current(0)
        fn = load_function(fake_ptx(["k"]), "k")
        codes = [launch(fn, [1, 1, 1], [32, 1, 1], 49152)]
        codes.append(launch(fn, [1, 1, 1], [32, 1, 1], 49153))
        codes.append(cu.cuFuncSetAttribute(fn, 8, 65536))
        codes.append(launch(fn, [1, 1, 1], [32, 1, 1], 65536))
        codes.append(launch(fn, [1, 1, 1], [32, 1, 1], 65537))
        codes.append(cu.cuFuncSetAttribute(fn, 8, 200000))
        result(codes=codes, log=log())
        """
        ),
    )
    assert r["codes"] == [0, 1, 0, 0, 1, 1]
    assert rejected(r) == [
        ["cuLaunchKernel", "dynamic_shared_memory_not_opted_in"],
        ["cuLaunchKernel", "dynamic_shared_memory_above_function_limit"],
        ["cuFuncSetAttribute", "dynamic_shared_memory_above_optin"],
    ]
    # Through the runtime: more than the device allows is the opt-in's error, in Python.
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        try:
            mod["dyn"](buf, 2, 128, 200000)
            msg = None
        except RuntimeError as err:
            msg = str(err)
        result(msg=msg, log=log())
        """
        ),
    )
    assert "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES=200000) for kernel 'dyn'" in r["msg"]
    assert "CUDA_ERROR_INVALID_VALUE" in r["msg"]
    assert rejected(r) == [["cuFuncSetAttribute", "dynamic_shared_memory_above_optin"]]


def test_dynamic_shared_memory_opt_in_is_race_free(fake):
    # Two threads launch one kernel with 100000 and 65536 bytes at once.  The fake's
    # cuFuncSetAttribute takes 50 ms, so both see the kernel not yet opted in: without a guard
    # the smaller request can lower the attribute after the larger one raised it, and the
    # larger launch is then refused (whichever thread's call lands last decides: about one round
    # in two without the guard, so 8 rounds).  Fresh modules each round (a fresh opt-in state).
    r = run_fake(
        fake,
        """
        kernels = [Kernel("dyn", [HANDLE], ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"])]
        buf = tvm.runtime.empty((64,), "float32", tvm.cuda(0))
        errors = []
        for round_ in range(8):
            mod = load_payload(write_cuda_payload(kernels, fake_ptx(["dyn"]), fmt="ptx"))
            mod["dyn"](buf, 1, 32, 0)  # loads the image
            barrier = threading.Barrier(2)
            def worker(smem):
                barrier.wait()
                try:
                    for _ in range(3):
                        mod["dyn"](buf, 1, 32, smem)
                except RuntimeError as err:
                    errors.append(str(err))
            threads = [threading.Thread(target=worker, args=(s,)) for s in (100000, 65536)]
            for t in threads: t.start()
            for t in threads: t.join()
        result(errors=errors, log=log())
        """,
        FAKE_CUDA_FUNC_ATTR_DELAY_MS="50",
    )
    assert r["errors"] == [] and rejected(r) == [], (r["errors"], r["log"])
    launches = parse_log(r["log"], "launch")
    assert sorted(ln["smem"] for ln in launches).count("100000") == 8 * 3
    # The attribute is only ever raised: once to 100000 per round, never lowered after it.
    values = [int(a["value"]) for a in parse_log(r["log"], "func_attr")]
    rounds = " ".join(map(str, values)).split("100000")[:-1]
    assert len(rounds) == 8 and all(r.split() in ([], ["65536"]) for r in rounds), values


# ------------------------------------------------------------------------ images


def test_ptx_for_a_newer_device_or_driver_is_refused(fake):
    ptx_sm90 = "fake_ptx(['k']).replace('sm_80', 'sm_90')"
    r = run_fake(fake, load_and_launch("k", ptx_sm90, "ptx"))
    assert "CUDA_ERROR_INVALID_PTX" in r["msg"] and "sm_90" in r["msg"], r["msg"]
    assert "cuModuleLoadData of the CUDA module (format 'ptx') on CUDA device 0" in r["msg"]
    assert rejected(r) == [["cuModuleLoadDataEx", "ptx_not_for_this_device"]]

    # Arch-specific PTX (sm_90a) runs on exactly that architecture.
    ptx_sm90a = "fake_ptx(['k']).replace('sm_80', 'sm_90a')"
    r = run_fake(fake, load_and_launch("k", ptx_sm90a, "ptx"), FAKE_CUDA_CC="10.0")
    assert "CUDA_ERROR_INVALID_PTX" in r["msg"], r["msg"]
    r = run_fake(fake, load_and_launch("k", ptx_sm90a, "ptx"), FAKE_CUDA_CC="9.0")
    assert r["msg"] is None and rejected(r) == []

    # PTX ISA 9.1 needs a CUDA 13.1 driver; 8.5 is fine on 12.6 but 8.7 is not.
    isa91 = "fake_ptx(['k']).replace('.version 8.0', '.version 9.1')"
    r = run_fake(fake, load_and_launch("k", isa91, "ptx"))
    assert "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" in r["msg"] and "upgrade the driver" in r["msg"]
    assert rejected(r) == [["cuModuleLoadDataEx", "ptx_not_for_this_device"]]
    r = run_fake(fake, load_and_launch("k", isa91, "ptx"), FAKE_CUDA_DRIVER_VERSION="13010")
    assert r["msg"] is None
    isa87 = "fake_ptx(['k']).replace('.version 8.0', '.version 8.7')"
    r = run_fake(fake, load_and_launch("k", isa87, "ptx"), FAKE_CUDA_DRIVER_VERSION="12060")
    assert "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" in r["msg"]
    r = run_fake(fake, load_and_launch("k", isa87, "ptx"), FAKE_CUDA_DRIVER_VERSION="12080")
    assert r["msg"] is None


def test_cubin_for_another_architecture_is_refused(fake):
    def cubin(sm, new_abi=True):
        return repr(fake_cubin("k", sm, new_abi))

    for sm, new_abi in [(90, True), (86, True), (70, False)]:
        r = run_fake(fake, load_and_launch("k", cubin(sm, new_abi), "cubin"))
        assert "CUDA_ERROR_NO_BINARY_FOR_GPU" in r["msg"], (sm, r["msg"])
        assert "not built for this GPU's architecture" in r["msg"]
        assert rejected(r) == [["cuModuleLoadDataEx", "cubin_not_for_this_device"]]
    # Same major, older or equal minor: runs (cubins are forward compatible within a major).
    for sm, cc, new_abi in [(80, "8.0", True), (80, "8.6", True), (86, "8.6", False)]:
        r = run_fake(fake, load_and_launch("k", cubin(sm, new_abi), "cubin"), FAKE_CUDA_CC=cc)
        assert r["msg"] is None and rejected(r) == [], (sm, cc, r["log"])
        assert "launch kernel=k" in r["log"]


def test_function_lookup_is_exact(fake):
    # The function table names `add`; the images only hold `add_kernel`.
    ptx = "fake_ptx(['add_kernel'])"
    r = run_fake(fake, load_and_launch("add_kernel", ptx, "ptx", table_name="add"))
    assert "kernel 'add' is listed in the module's function table" in r["msg"], r["msg"]
    cubin = repr(fake_cubin("add_kernel", 80))
    r = run_fake(fake, load_and_launch("add_kernel", cubin, "cubin", table_name="add"))
    assert "kernel 'add' is listed in the module's function table" in r["msg"], r["msg"]
    # ... and the exact names are found.
    r = run_fake(fake, load_and_launch("add_kernel", cubin, "cubin"))
    assert r["msg"] is None and "launch kernel=add_kernel" in r["log"]


def test_stale_and_foreign_handles_are_refused(fake):
    # Directly (the runtime never does these): a destroyed event, elapsed time of an event never
    # recorded, and a function of device 0's module launched in device 1's context.
    r = run_fake(
        fake,
        direct(
            """
        make_current(0)
        fn = load_function(fake_ptx(["k"]), "k")
        a, b = P(), P()
        ok(cu.cuEventCreate(ctypes.byref(a), 0), "event a")
        ok(cu.cuEventCreate(ctypes.byref(b), 0), "event b")
        ms = ctypes.c_float()
        codes = [cu.cuEventElapsedTime_v2(ctypes.byref(ms), a, b)]
        ok(cu.cuEventDestroy_v2(b), "destroy")
        codes.append(cu.cuEventSynchronize(b))
        make_current(1)
        codes.append(launch(fn, [1, 1, 1], [32, 1, 1], 0))
        result(codes=codes, log=log())
        """
        ),
        FAKE_CUDA_DEVICES="2",
    )
    assert r["codes"] == [400, 400, 400]  # CUDA_ERROR_INVALID_HANDLE
    assert rejected(r) == [
        ["cuEventElapsedTime", "event_never_recorded"],
        ["cuEventSynchronize", "destroyed_event"],
        ["cuLaunchKernel", "function_of_another_context"],
    ]
