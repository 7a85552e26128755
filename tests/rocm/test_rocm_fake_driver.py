"""The whole ROCm backend against a fake HIP runtime (tests/fakes/fake_hip.c),
without a GPU: device attributes and the target config, memory and copies, streams and events,
the architecture check, module loading and, above all, what reaches hipModuleLaunchKernel
(grid, block, dynamic shared memory, the packed argument buffer, the stream) when the host code
of real apache-tvm 0.27 ROCm artifacts runs, the Relax VM included.

The fake runs no kernel; it records every call.  Each test runs in a fresh interpreter because
the HIP runtime is opened once per process.
"""

from __future__ import annotations

import math
import struct
import textwrap

import fakes
import pytest
from backend_testing.no_driver import run_diagnostics
from backend_testing.workspace import assert_workspace_pool_reused, workspace_pool_script
from rocm_support import (
    ARCHS,
    HERE,
    fake_arch_env,
    fnv1a,
    hip_payload_of,
    parse_log,
    rocm_cases,
    unpack_args,
)

from conftest import ARTIFACTS, REPO, child_result, run_python

PRELUDE = f"""
import sys
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
from children.on_fake_hip import *
"""


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("hip"))


def run_fake(fake: str, body: str, **env: str) -> dict:
    proc = run_python(PRELUDE + textwrap.dedent(body), env={"TVM_ROCM_LIBRARY": fake, **env})
    return child_result(proc)


# ------------------------------------------------------------------------ device API


def test_device_attributes_and_target(fake):
    r = run_fake(
        fake,
        """
        dev = tvm.rocm(0)
        attrs = {a: getattr(dev, a) for a in (
            "exist", "device_name", "compute_version", "max_threads_per_block", "warp_size",
            "max_shared_memory_per_block", "multi_processor_count", "max_clock_rate",
            "max_thread_dimensions", "l2_cache_size_bytes", "total_global_memory",
            "available_global_memory", "api_version", "driver_version")}
        result(attrs=attrs, gcn=dev._GetDeviceAttr(10, 0, 10), target=hook.detect_target(dev),
               rocm1=tvm.rocm(1).exist, host0=tvm.device(11, 0).exist, status=hook.driver_status(),
               info=hook.driver_info())
        """,
        FAKE_HIP_WARP="64",
    )
    a = r["attrs"]
    assert a["exist"] is True and a["device_name"] == "Fake AMD GPU 0"
    assert a["compute_version"] == "9.0" and a["warp_size"] == 64
    assert a["max_threads_per_block"] == 1024 and a["max_shared_memory_per_block"] == 65536
    assert a["multi_processor_count"] == 104 and a["max_clock_rate"] == 1700000
    assert list(a["max_thread_dimensions"]) == [1024, 1024, 1024]
    assert a["total_global_memory"] == 64 << 30 and a["available_global_memory"] == 60 << 30
    assert a["api_version"] == a["driver_version"] == 60342134
    assert r["gcn"] == "gfx90a:sramecc+:xnack-"
    assert r["target"] == {
        "kind": "rocm",
        "mcpu": "gfx90a",
        "max_shared_memory_per_block": 65536,
        "max_threads_per_block": 1024,
        "max_num_threads": 1024,
        "thread_warp_size": 64,
    }
    assert r["rocm1"] is False and r["host0"] is True and r["status"] == ""
    assert r["info"]["gcn_archs"] == ["gfx90a:sramecc+:xnack-"] and r["info"]["device_count"] == 1


def test_diagnostics_show_the_device_and_its_target(fake):
    out = run_diagnostics({"TVM_ROCM_LIBRARY": fake})
    assert "rocm:0  Fake AMD GPU 0  target: rocm -mcpu=gfx90a" in out, out
    assert "-thread_warp_size=64" in out and "rocm_host:0  ROCm pinned host memory" in out


def test_rdna_device_reports_wave32(fake):
    r = run_fake(
        fake, "result(target=hook.detect_target(tvm.rocm(0)))", FAKE_HIP_ARCH="gfx1100", FAKE_HIP_WARP="32"
    )
    assert r["target"]["mcpu"] == "gfx1100" and r["target"]["thread_warp_size"] == 32


def test_memory_copies_and_pinned_memory(fake):
    r = run_fake(
        fake,
        """
        dev = tvm.rocm(0)
        x = np.arange(1000, dtype="float32")
        clear()
        a = tvm.runtime.tensor(x, dev)
        b = tvm.runtime.empty((1000,), "float32", dev)
        a.copyto(b)
        pinned = tvm.runtime.empty((1000,), "float32", tvm.device(11, 0))
        pinned.copyfrom(b)
        back = b.numpy()
        middle = tvm.runtime.empty((500,), "float32", dev)
        middle.copyfrom(x[250:750])
        live = fake.live_allocations()
        del a, b, pinned, middle
        gc.collect()
        result(ok=bool((back == x).all()), log=log(), live=live,
               after=fake.live_allocations(), pinned_back=True)
        """,
    )
    assert r["ok"], "copies through the fake's host-backed device memory must round-trip"
    kinds = [c for c in r["log"].splitlines() if c.startswith("copy")]
    assert kinds[0].startswith("copy htod bytes=4000") and "copy dtod bytes=4000" in r["log"]
    assert "copy dtoh bytes=4000" in r["log"] and "host_alloc bytes=4000" in r["log"]
    assert "alloc device=0 bytes=4000" in r["log"]
    assert r["live"] == 4 and r["after"] == 0


def test_out_of_memory_message(fake):
    r = run_fake(
        fake,
        """
        result_of_error(lambda: tvm.runtime.empty((1 << 41,), "uint8", tvm.rocm(0)))
        """,
    )
    assert "out of memory on ROCm device 0 (Fake AMD GPU 0, gfx90a:sramecc+:xnack-)" in r["msg"]
    assert "61440 MiB of 65536 MiB are free" in r["msg"]


def test_streams_events_and_the_device_timer(fake):
    r = run_fake(
        fake,
        """
        dev = tvm.rocm(0)
        s = dev.create_raw_stream()
        s2 = dev.create_raw_stream()
        created = log()
        clear()
        dev.set_raw_stream(s)
        y = tvm.runtime.tensor(np.ones(4, "float32"), dev)
        y.numpy()
        dev.sync()
        tvm.get_global_func("runtime.Device_StreamSyncFromTo")(dev, s, s2)
        dev.set_raw_stream(0)
        dev.free_raw_stream(s)
        dev.free_raw_stream(s2)
        streams = log()
        ev = lambda n: tvm.get_global_func("tvm_runtime.rocm.event_" + n)
        e1, e2 = ev("create")(0, True), ev("create")(0, True)
        ev("record")(e1, 0, None)
        ev("record")(e2, 0, None)
        ms = ev("elapsed_ms")(e1, e2)
        ev("destroy")(e1)
        ev("destroy")(e2)
        clear()
        mod = tvm.runtime.load_module(artifact("add"))
        a = tvm.runtime.tensor(np.ones(1024, "float32"), dev)
        c = tvm.runtime.empty((1024,), "float32", dev)
        timer = mod.time_evaluator("add", dev, number=3, repeat=2)(a, a, c)
        result(created=created, streams=streams, ms=ms, timed=log(), mean=timer.mean)
        """,
    )
    log = r["streams"]
    assert "stream_create id=1 flags=1 device=0" in r["created"]  # hipStreamNonBlocking
    copies = parse_log(log, "copy")
    assert [c["stream"] for c in copies] == ["1", "1"], log
    assert "stream_sync id=1" in log
    assert "event_record id=1 stream=1" in log and "stream_wait stream=2 event=1" in log
    assert "stream_destroy id=1" in log and "stream_destroy id=2" in log
    assert r["ms"] == pytest.approx(1.25)
    # runtime.timer.rocm: each round between two events on the current stream.
    timed = r["timed"]
    assert len(parse_log(timed, "launch")) >= 6 and "event_record" in timed
    assert r["mean"] == pytest.approx(1.25e-3 / 3, rel=1e-3)


def test_workspace_pool_on_device_memory(fake):
    # What compiled host code does for a device workspace (artifact `workspace`).
    assert_workspace_pool_reused(run_fake(fake, workspace_pool_script("rocm", 10)))


# ------------------------------------------------------------------------ launches

# Launch dimensions the host code of each artifact computes (the schedules of generate.py):
# {kernel: [(grid, block) per launch]} for each manifest call, in call order.
EXPECTED_DIMS = {
    "add": [{"add_kernel": ((16, 1, 1), (64, 1, 1))}],
    "matmul": [{"matmul_kernel": ((3, 4, 1), (16, 16, 1))}],
    "dyn_muladd": [
        {"dyn_muladd_kernel": ((math.ceil(17 / 64), 1, 1), (64, 1, 1))},
        {"dyn_muladd_kernel": ((math.ceil(1000 / 64), 1, 1), (64, 1, 1))},
    ],
    "multi_out": [{"multi_out_kernel": ((4, 1, 1), (64, 1, 1))}],
    "row_sum": [{"row_sum_kernel": ((64, 1, 1), (32, 1, 1))}],
}


def _dims(s: str) -> tuple[int, ...]:
    return tuple(int(v) for v in s.split(","))


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_artifacts_reach_hip_as_apache_tvm_launches_them(fake, arch):
    """Every fixture of `arch` on a fake device of that architecture."""
    names = [c["name"] for c in rocm_cases(arch=arch)]
    r = run_fake(
        fake,
        f"""
        dev = tvm.rocm(0)
        runs = {{}}
        for name in {names!r}:
            case_ = rocm_case(name)
            calls = []
            for call in case_["calls"]:
                clear()
                outputs = run_kernel_call(tvm, case_, call, dev)
                dev.sync()
                scalars = [a["value"] for a in call["args"] if a["kind"] == "scalar"]
                calls.append({{"log": log(), "scalars": scalars}})
            runs[name] = calls
        result(runs=runs)
        """,
        **fake_arch_env(arch),
    )
    assert sorted(r["runs"]) == sorted(names) and len(names) >= 6
    for name, calls in r["runs"].items():
        case_ = next(c for c in rocm_cases(arch=arch) if c["name"] == name)
        kernel = case_["function"]
        payload = hip_payload_of(ARTIFACTS / case_["file"])
        for i, run in enumerate(calls):
            log = run["log"]
            loads = parse_log(log, "module_load")
            assert [ld["fnv"] for ld in loads] == [fnv1a(payload.code)], (name, log)
            assert loads[0]["mach"] == hex(ARCHS[arch]["mach"])
            launches = parse_log(log, "launch")
            assert [ln["kernel"] for ln in launches] == case_["device_kernels"], log
            for ln in launches:
                arg_types = payload.kernels[ln["kernel"]].arg_types
                values = unpack_args(arg_types, ln["args"])
                assert int(ln["size"]) == len(ln["args"]) // 2
                handles = [v for v, t in zip(values, arg_types) if t == (3, 64, 1)]
                assert all(h != 0 and h % 64 == 0 for h in handles), (name, values)
                scalars = [v for v, t in zip(values, arg_types) if t != (3, 64, 1)]
                if kernel == "dyn_muladd":
                    assert scalars == [[17, 1000][i]]
                else:
                    # In the kernel's parameter order, which is the call's (float32 values
                    # compared as float32, the width the buffer holds them in).
                    expected = [
                        struct.unpack("<f", struct.pack("<f", v))[0] if isinstance(v, float) else v
                        for v in run["scalars"]
                    ]
                    assert scalars == expected, (name, scalars, run["scalars"])
                assert ln["stream"] == "0" and ln["device"] == "0" and ln["smem"] == "0"
                if kernel in EXPECTED_DIMS:
                    grid, block = EXPECTED_DIMS[kernel][i][ln["kernel"]]
                    assert (_dims(ln["grid"]), _dims(ln["block"])) == (grid, block), (name, ln)
        if kernel == "workspace":
            # The 2 MiB intermediate comes from the device workspace pool (device type 10).
            assert "alloc device=0 bytes=2097152" in calls[0]["log"]


def test_module_is_loaded_once_per_device(fake):
    r = run_fake(
        fake,
        """
        mod = tvm.runtime.load_module(artifact("add"))
        a = tvm.runtime.tensor(np.ones(1024, "float32"), tvm.rocm(0))
        b = tvm.runtime.tensor(np.ones(1024, "float32"), tvm.rocm(1))
        c0 = tvm.runtime.empty((1024,), "float32", tvm.rocm(0))
        c1 = tvm.runtime.empty((1024,), "float32", tvm.rocm(1))
        clear()
        for _ in range(3):
            mod["add"](a, a, c0)
        mod["add"](b, b, c1)
        c0.copyto(c1)
        first = log()
        del mod
        gc.collect()
        result(log=first, unload=log()[len(first):])
        """,
        FAKE_HIP_DEVICES="2",
    )
    loads = parse_log(r["log"], "module_load")
    assert [ld["device"] for ld in loads] == ["0", "1"]
    assert [ln["device"] for ln in parse_log(r["log"], "launch")] == ["0", "0", "0", "1"]
    assert "copy peer bytes=4096 from=0 to=1" in r["log"]
    assert sorted(parse_log(r["unload"], "module_unload"), key=str) == [{"device": "0"}, {"device": "1"}]


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_relax_mlp_runs_on_the_vm(fake, arch):
    (case_,) = rocm_cases("vm", arch=arch)
    r = run_fake(
        fake,
        f"""
        dev = tvm.rocm(0)
        case_ = rocm_case({case_["name"]!r})
        call = case_["calls"][0]
        data = np.load(os.path.join({str(ARTIFACTS)!r}, call["npz"]))
        vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(artifact(case_["name"])), dev)
        inputs = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
        clear()
        out = vm["main"](*inputs)
        dev.sync()
        result(shape=list(out.shape), device=str(out.device), log=log())
        """,
        **fake_arch_env(arch),
    )
    assert r["shape"] == [4, 8] and "rocm" in r["device"]
    payload = hip_payload_of(ARTIFACTS / case_["file"])
    launched = [ln["kernel"] for ln in parse_log(r["log"], "launch")]
    assert launched and set(launched) <= set(payload.kernels), r["log"]


# ------------------------------------------------------------------------ errors


def test_architecture_mismatch_is_refused_before_loading(fake):
    body = """
        mod = tvm.runtime.load_module(artifact("{name}"))
        a = tvm.runtime.tensor(np.ones(1024, "float32"), tvm.rocm(0))
        clear()
        try:
            mod["add"](a, a, a)
        except RuntimeError as err:
            result(msg=str(err), log=log())
        """
    rdna = run_fake(fake, body.format(name="add"), FAKE_HIP_ARCH="gfx1030")
    assert "cannot load the ROCm kernels of this artifact on ROCm device 0" in rdna["msg"]
    assert "it was built for gfx90a, the device is gfx1030" in rdna["msg"]
    assert '"mcpu": "gfx1030"' in rdna["msg"]
    assert "module_load" not in rdna["log"]
    cdna = run_fake(fake, body.format(name="add_gfx1100"))
    assert "it was built for gfx1100, the device is gfx90a" in cdna["msg"]


def test_xnack_mode_mismatch_is_refused(fake):
    r = run_fake(
        fake,
        """
        def xnack_on(code):
            flags = int.from_bytes(code[48:52], "little")
            code[48:52] = ((flags & ~0x300) | 0x300).to_bytes(4, "little")
        f = load(add_payload(code_patch=xnack_on))["add_kernel"]
        result_of_error(lambda: f(None, None, None, 16, 64))
        """,
    )
    assert "it was built with xnack+ but the device runs with xnack-" in r["msg"]
    assert "gfx90a:xnack+" in r["msg"]


def test_rejected_code_object_says_why_and_is_retried(fake):
    r = run_fake(
        fake,
        """
        mod = tvm.runtime.load_module(artifact("add"))
        a = tvm.runtime.tensor(np.ones(1024, "float32"), tvm.rocm(0))
        try:
            mod["add"](a, a, a)
        except RuntimeError as err:
            msg = str(err)
        mod["add"](a, a, a)  # nothing was cached: the next call loads again
        result(msg=msg, loads=parse_log(log(), "module_load"))
        """,
        FAKE_HIP_REJECT_LOADS="1",
    )
    assert "hipModuleLoadData of the ROCm code object (gfx90a, code object v" in r["msg"]
    assert "failed: hipErrorNoBinaryForGpu" in r["msg"] and "re-export the model" in r["msg"]
    # The rejected load, then the retry that succeeded.
    assert ["fnv" in ld for ld in r["loads"]] == [False, True], r["loads"]


def test_kernel_missing_from_the_code_object(fake):
    r = run_fake(
        fake,
        """
        f = load(add_payload([Kernel("ghost", [HANDLE, HANDLE, HANDLE])]))["ghost"]
        result_of_error(lambda: f(None, None, None, 16, 64))
        """,
    )
    assert "kernel 'ghost' is listed in the module's function table but its image on ROCm " in r["msg"]


def test_launch_failure_message(fake):
    r = run_fake(
        fake,
        """
        f = load(add_payload())["add_kernel"]
        buf = tvm.runtime.empty((4,), "float32", tvm.rocm(0))
        result_of_error(lambda: f(buf, buf, buf, 1, 2048))
        """,
    )
    assert "launch of ROCm kernel 'add_kernel' on ROCm device 0 (Fake AMD GPU 0" in r["msg"]
    assert "grid (1, 1, 1), block (2048, 1, 1), 0 bytes of dynamic shared memory" in r["msg"]
    assert "failed: hipErrorInvalidValue" in r["msg"]


def test_wrong_argument_count_is_a_type_error(fake):
    r = run_fake(
        fake,
        """
        f = load(add_payload())["add_kernel"]
        try:
            f(None, None, 16)
        except TypeError as err:
            result(msg=str(err))
        """,
    )
    assert "kernel 'add_kernel' expects 5 packed arguments" in r["msg"]


def test_pinned_host_sync_waits_for_every_device(fake):
    # A sync of rocm_host waits for the device work that may write pinned memory: the current
    # stream of every device (the fake HIP completes copies at once, so the log shows the waits),
    # or the stream given; a host read of pinned memory waits the same way first.  The caller's
    # current device is left as it was.
    r = run_fake(
        fake,
        """
        host = tvm.device(11, 0)
        pinned = tvm.runtime.empty((16,), "float32", host)
        tvm.runtime.tensor(np.arange(16, dtype="float32"), tvm.rocm(1)).copyto(pinned)
        get_device = ctypes.CDLL(os.environ["TVM_ROCM_LIBRARY"]).hipGetDevice
        before = ctypes.c_int(); get_device(ctypes.byref(before))
        clear()
        host.sync()
        synced = log()
        clear()
        values = pinned.numpy().tolist()
        read = log()
        s = tvm.rocm(1).create_raw_stream()
        clear()
        tvm.get_global_func("runtime.Device_StreamSync")(host, s)
        explicit = log()
        after = ctypes.c_int(); get_device(ctypes.byref(after))
        result(synced=synced, read=read, explicit=explicit, values=values,
               before=before.value, after=after.value)
        """,
        FAKE_HIP_DEVICES="2",
    )
    assert [(s["id"], s["device"]) for s in parse_log(r["synced"], "stream_sync")] == [("0", "0"), ("0", "1")]
    # numpy(): the wait before the host copy, then the sync after it that every read does.
    assert [(s["id"], s["device"]) for s in parse_log(r["read"], "stream_sync")] == [
        ("0", "0"),
        ("0", "1"),
    ] * 2
    assert [s["id"] for s in parse_log(r["explicit"], "stream_sync")] == ["1"]
    assert r["values"] == list(range(16)) and r["before"] == r["after"]
