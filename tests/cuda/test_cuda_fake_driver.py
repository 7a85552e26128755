"""The whole CUDA backend against a fake driver (tests/fakes/fake_cuda.c), without a
GPU: device attributes, memory and copies, streams and events, context handling, module loading
and, above all, what reaches cuLaunchKernel (grid, block, dynamic shared memory, the packed
parameter values, the stream) when apache-tvm 0.27 host code runs.

The fake runs nothing; it records every call.  Each test runs in a fresh interpreter because the
driver is opened once per process.
"""

from __future__ import annotations

import textwrap

import fakes
import pytest
from backend_testing.workspace import assert_workspace_pool_reused, workspace_pool_script
from cuda_support import HERE, has_nvrtc, parse_log

from conftest import ARTIFACTS, REPO, child_result, run_module, run_python

PRELUDE = f"""
import sys
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
from children.on_fake_cuda import *
"""


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("cuda"))


def run_fake(fake: str, body: str, **env: str) -> dict:
    full_env = {"TVM_CUDA_DRIVER_LIBRARY": fake, **env}
    proc = run_python(PRELUDE + textwrap.dedent(body), env=full_env)
    return child_result(proc)


# ------------------------------------------------------------------------ device API


def test_device_attributes(fake):
    r = run_fake(
        fake,
        """
        dev = tvm.cuda(0)
        prop = tvm.get_global_func("runtime.GetDeviceTargetProperty")
        attrs = {a: getattr(dev, a) for a in (
            "exist", "device_name", "compute_version", "max_threads_per_block", "warp_size",
            "max_shared_memory_per_block", "multi_processor_count", "max_clock_rate",
            "max_thread_dimensions", "l2_cache_size_bytes", "total_global_memory",
            "available_global_memory", "api_version", "driver_version")}
        result(attrs=attrs, target=hook.detect_target(dev),
               optin=prop(dev, "max_shared_memory_per_block_optin"), regs=dev._GetDeviceAttr(2, 0, 9),
               cuda1=tvm.cuda(1).exist, host0=tvm.device(3, 0).exist, host1=tvm.device(3, 1).exist,
               status=hook.driver_status(), log=log())
        """,
        FAKE_CUDA_CC="8.6",
        FAKE_CUDA_DRIVER_VERSION="12040",
    )
    assert r["attrs"] == {
        "exist": True,
        "device_name": "Fake CUDA Device 0",
        "compute_version": "8.6",
        "max_threads_per_block": 1024,
        "warp_size": 32,
        "max_shared_memory_per_block": 49152,
        "multi_processor_count": 108,
        "max_clock_rate": 1410000,
        "max_thread_dimensions": [1024, 1024, 64],
        "l2_cache_size_bytes": 40 << 20,
        "total_global_memory": 16 << 30,
        "available_global_memory": 15 << 30,
        "api_version": 13000,
        "driver_version": 12040,
    }
    assert r["target"] == {
        "kind": "cuda",
        "arch": "sm_86",
        "max_shared_memory_per_block": 49152,
        "max_threads_per_block": 1024,
        "max_num_threads": 1024,
        "thread_warp_size": 32,
        "registers_per_block": 65536,
        "l2_cache_size_bytes": 40 << 20,
    }
    assert r["optin"] == 166912 and r["regs"] == 65536
    assert r["cuda1"] is False and r["host0"] is True and r["host1"] is False
    assert r["status"] == ""
    # Queries run in the device's context without making it current on the calling thread.
    assert "set_current" not in r["log"]


def test_diagnostics_show_device_and_target(fake):
    proc = run_module(
        "tvm.backend",
        env={"TVM_CUDA_DRIVER_LIBRARY": fake, "FAKE_CUDA_CC": "9.0"},
    )
    assert "Fake CUDA Device 0" in proc.stdout and "-arch=sm_90" in proc.stdout


def test_driver_is_opened_on_first_device_use(fake):
    proc = run_python(
        f"""
        def mapped(name):
            return name in open("/proc/self/maps").read()
        print("nvrtc before import:", mapped("libnvrtc"))
        import tvm
        mod = tvm.runtime.load_module({str(ARTIFACTS / "cuda" / "add.so")!r})
        print("after import and load:", mapped("libcuda_fake"))
        tvm.cuda(0).exist
        print("after first use:", mapped("libcuda_fake"), "nvrtc:", mapped("libnvrtc"))
        """,
        env={"TVM_CUDA_DRIVER_LIBRARY": fake},
    )
    assert "after import and load: False" in proc.stdout
    # NVRTC is opened only to compile; an interpreter that maps it at start-up (seen on the GPU
    # machine's Python) keeps it, so what counts is that first use adds no mapping.
    before = "nvrtc before import: True" in proc.stdout
    assert f"after first use: True nvrtc: {before}" in proc.stdout, proc.stdout


def test_memory_and_copies(fake):
    r = run_fake(
        fake,
        """
        dev = tvm.cuda(0)
        base = fake.live_allocations()
        ok = {}
        for dtype in ["float32", "float16", "int8", "int64", "float64", "bool"]:
            x = (np.arange(1000) % 7 - 3).astype(dtype)
            ok[dtype] = bool((tvm.runtime.tensor(x, dev).numpy() == x).all())
        x = np.random.default_rng(0).standard_normal((64, 33)).astype("float32")
        a = tvm.runtime.tensor(x, dev)
        b = a.copyto(dev)
        ok["d2d"] = bool((b.numpy() == x).all())
        t = tvm.runtime.tensor(np.arange(100, dtype="float32"), dev)
        view = t._create_view((10,), "float32", 40 * 4)
        ok["view_read"] = view.numpy().tolist() == list(range(40, 50))
        view.copyfrom(np.full(10, -1.0, dtype="float32"))
        expected = np.arange(100, dtype="float32"); expected[40:50] = -1
        ok["view_write"] = bool((t.numpy() == expected).all())
        ok["empty"] = tvm.runtime.empty((0,), "float32", dev).numpy().shape == (0,)
        pinned = tvm.runtime.empty((16,), "float32", tvm.device(3, 0))
        pinned.copyfrom(np.arange(16, dtype="float32"))
        on_gpu = pinned.copyto(dev)
        ok["pinned"] = on_gpu.numpy().tolist() == list(range(16))
        del a, b, t, view, pinned, on_gpu
        gc.collect()
        result(ok=ok, leaked=fake.live_allocations() - base, log=log())
        """,
    )
    assert all(r["ok"].values()), r["ok"]
    assert r["leaked"] == 0
    assert "copy dtod" in r["log"] and "host_alloc" in r["log"] and "host_free" in r["log"]


def test_out_of_memory_message(fake):
    r = run_fake(
        fake,
        """
        result_of_error(lambda: tvm.runtime.empty((1 << 41,), "uint8", tvm.cuda(0)))
        """,
    )
    assert "out of memory on CUDA device 0 (Fake CUDA Device 0)" in r["msg"]
    assert "cannot allocate 2199023255552 bytes; 15360 MiB of 16384 MiB are free" in r["msg"]


def test_workspace_pool_on_device_memory(fake):
    # What compiled host code does for a device workspace (artifact `workspace`).
    assert_workspace_pool_reused(run_fake(fake, workspace_pool_script("cuda", 2)))


def test_streams(fake):
    r = run_fake(
        fake,
        """
        dev = tvm.cuda(0)
        s = dev.create_raw_stream()
        s2 = dev.create_raw_stream()
        clear()
        dev.set_raw_stream(s)
        y = tvm.runtime.tensor(np.ones(4, "float32"), dev)
        y.numpy()
        dev.sync()
        tvm.get_global_func("runtime.Device_StreamSyncFromTo")(dev, s, s2)
        dev.set_raw_stream(0)
        y.numpy()
        dev.free_raw_stream(s)
        dev.free_raw_stream(s2)
        result(log=log())
        """,
    )
    log = r["log"]
    copies = parse_log(log, "copy")
    assert [c["stream"] for c in copies] == ["1", "1", "0"], log
    assert "stream_sync id=1" in log
    assert "event_record id=1 stream=1" in log and "stream_wait stream=2 event=1" in log
    assert "stream_destroy id=1" in log and "stream_destroy id=2" in log


def test_stream_create_flags(fake):
    r = run_fake(fake, "tvm.cuda(0).create_raw_stream(); result(log=log())")
    assert "stream_create id=1 flags=1" in r["log"]  # CU_STREAM_NON_BLOCKING


def test_events(fake):
    r = run_fake(
        fake,
        """
        start, end = hook.Event(tvm.cuda(0)), hook.Event(tvm.cuda(0))
        start.record()
        end.record()
        result(ms=start.elapsed_time(end))
        """,
    )
    assert r["ms"] == pytest.approx(1.25)


# ------------------------------------------------------------------------ launches (crafted)

PTX_KERNELS = """
kernels = [
    Kernel("scalars", [HANDLE, INT32, INT64, UINT32, FLOAT32, FLOAT64],
           ["blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"]),
    Kernel("dyn", [HANDLE], ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"]),
    Kernel("tmap", [HANDLE, HANDLE], extra_tags=[0, 1]),
    Kernel("cluster", [HANDLE], ["blockIdx.x", "threadIdx.x", "clusterCtaIdx.x"]),
    Kernel("coop", [HANDLE], ["blockIdx.x", "threadIdx.x", "tirx.use_cooperative_launch"]),
    Kernel("pdl", [HANDLE], ["blockIdx.x", "threadIdx.x", "tirx.use_programtic_dependent_launch"]),
    Kernel("ghost", [HANDLE]),
]
ptx = fake_ptx([k.name for k in kernels if k.name != "ghost"])
mod = load_payload(write_cuda_payload(kernels, ptx, fmt="ptx"))
for k in kernels:
    expect_params(k.name, len(k.arg_types))
dev = tvm.cuda(0)
buf = tvm.runtime.empty((64,), "float32", dev)
"""


def with_ptx_kernels(body: str) -> str:
    return PTX_KERNELS + textwrap.dedent(body)


def test_scalar_packing_and_3d_grid(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        clear()
        mod["scalars"](buf, -5, 2**40 + 3, 2**32 - 1, 1.5, 0.1, 3, 2, 2, 4, 5, 1)
        mod["scalars"](None, 0, 0, 0, 0.0, 0.0, 1, 1, 1, 1, 1, 1)
        result(launches=parse_log(log(), "launch"), buf=buf.data_ptr())
        """
        ),
    )
    first, second = r["launches"]
    assert first["kernel"] == "scalars" and first["grid"] == "3,2,2" and first["block"] == "4,5,1"
    params = first["params"].split(",")
    assert int(params[0], 16) == r["buf"]  # buffers: the device pointer itself
    assert params[1] == "fffffffb"  # int32 -5, narrowed to 4 bytes
    assert int(params[2], 16) == 2**40 + 3
    assert params[3] == "ffffffff"  # uint32
    assert params[4] == "3fc00000"  # float32 1.5
    assert params[5] == "3fb999999999999a"  # float64 0.1
    assert second["params"].split(",")[0] == "0"  # None buffer -> NULL


def test_dynamic_shared_memory_above_48k_is_opted_in(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        clear()
        mod["dyn"](buf, 2, 128, 1024)
        mod["dyn"](buf, 2, 128, 65536)
        mod["dyn"](buf, 2, 128, 65536)
        mod["dyn"](buf, 2, 128, 100000)
        result(log=log())
        """
        ),
    )
    attrs = parse_log(r["log"], "func_attr")
    # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, set once per new maximum.
    assert [(a["attr"], a["value"]) for a in attrs] == [("8", "65536"), ("8", "100000")]
    assert [ln["smem"] for ln in parse_log(r["log"], "launch")] == ["1024", "65536", "65536", "100000"]


def test_tensor_map_argument_is_passed_by_pointer(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        tensor_map = (ctypes.c_uint64 * 16)(0x1122334455667788)  # a 128-byte CUtensorMap
        mod["tmap"](buf, ctypes.c_void_p(ctypes.addressof(tensor_map)), 1, 32)
        result(launch=parse_log(log(), "launch")[-1])
        """
        ),
    )
    # The driver copies 128 bytes from the param pointer: it must be the host struct itself.
    assert r["launch"]["params"].split(",")[1] == "1122334455667788"


def test_cluster_cooperative_and_pdl_use_launch_ex(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        clear()
        mod["cluster"](buf, 4, 32, 2)
        mod["cluster"](buf, 16, 32, 16)
        mod["coop"](buf, 4, 32)
        mod["pdl"](buf, 4, 32)
        result(log=log())
        """
        ),
    )
    ex = parse_log(r["log"], "launch_ex")
    assert [(e["kernel"], e["attrs"]) for e in ex] == [
        ("cluster", "4:2,1,1"),
        ("cluster", "4:16,1,1"),
        ("coop", "2:1"),
        ("pdl", "6:1"),
    ]
    # Clusters above 8 blocks are non-portable and must be allowed first.
    assert "func_attr kernel=cluster attr=14 value=1" in r["log"]


def test_kernel_missing_from_image(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        result_of_error(lambda: mod["ghost"](buf, 1, 1))
        """
        ),
    )
    assert "kernel 'ghost' is listed in the module's function table" in r["msg"]


def test_launch_failure_message(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        result_of_error(lambda: mod["dyn"](buf, 2, 2048, 0))
        """
        ),
    )
    assert "launch of CUDA kernel 'dyn' on CUDA device 0 (Fake CUDA Device 0)" in r["msg"]
    assert "grid (2, 1, 1), block (2048, 1, 1)" in r["msg"] and "CUDA_ERROR_INVALID_VALUE" in r["msg"]


def test_rejected_image_reports_the_jit_log(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        result_of_error(lambda: mod["dyn"](buf, 1, 32, 0))
        """
        ),
        FAKE_CUDA_REJECT_LOADS="5",
    )
    assert "cuModuleLoadData of the CUDA module (format 'ptx') on CUDA device 0" in r["msg"]
    assert "JIT log: fake JIT: image rejected" in r["msg"] and "CUDA_ERROR_INVALID_IMAGE" in r["msg"]


def test_devices_contexts_and_peer_copies(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        set_device = tvm.get_global_func("__tvm_set_device")
        clear()
        set_device(2, 1)
        mod["dyn"](buf, 1, 32, 0)
        set_device(2, 0)
        mod["dyn"](buf, 1, 32, 0)
        other = []
        t = threading.Thread(target=lambda: other.append(mod["dyn"](buf, 1, 32, 0)))
        t.start(); t.join()
        a = tvm.runtime.tensor(np.arange(8, dtype="float32"), tvm.cuda(0))
        b = a.copyto(tvm.cuda(1))
        result(log=log(), b=b.numpy().tolist())
        """
        ),
        FAKE_CUDA_DEVICES="2",
    )
    loads = parse_log(r["log"], "module_load")
    launches = parse_log(r["log"], "launch")
    # One image per device, loaded lazily; each launch in its device's context.
    assert [ld["ctx"] for ld in loads] == ["1", "0"]
    assert [ln["ctx"] for ln in launches] == ["1", "0", "0"]  # a new thread starts on device 0
    assert "copy peer bytes=32 from=0 to=1" in r["log"]
    assert r["b"] == list(range(8))


def test_time_evaluator(fake):
    r = run_fake(
        fake,
        with_ptx_kernels(
            """
        clear()
        res = mod.time_evaluator("dyn", dev, number=3, repeat=2)(buf, 1, 32, 0)
        result(
            results=list(res.results),
            launches=len(parse_log(log(), "launch")),
            syncs=log().count("stream_sync"),
            records=log().count("event_record"),
            timing_events=log().count("event_create") - log().count("flags=2"),
        )
        """
        ),
    )
    assert len(r["results"]) == 2 and r["launches"] == 1 + 2 * 3 and r["syncs"] >= 2
    # Rounds are timed on the device (runtime.timer.cuda): two timing events, a start and a stop
    # record per round; the fake driver's clock advances 1.25 ms per record, so each round is
    # 1.25 ms for 3 calls.
    assert r["timing_events"] == 2 and r["records"] == 2 * 2, r
    assert r["results"] == pytest.approx([1.25e-3 / 3] * 2, rel=1e-6), r


# ------------------------------------------------------------------------ real artifacts

ARTIFACT_SCRIPT = """
from conftest import MANIFEST
dev = tvm.cuda(0)
out = {}
try:
    for case_ in [c for c in MANIFEST["cases"] if c["target"] == "cuda" and c["kind_of_case"] == "kernel"]:
        mod = tvm.runtime.load_module(str(ARTIFACTS / case_["file"]))
        info = hook.describe_module(mod.imports[0])
        for name, k in info["kernels"].items():
            expect_params(name, len(k["arg_types"]))
        runs = []
        for call in case_["calls"]:
            # What run_kernel_call does, keeping every tensor argument's pointer, in call order.
            data = np.load(ARTIFACTS / call["npz"])
            args, tensors = [], []
            for arg in call["args"]:
                if arg["kind"] == "scalar":
                    args.append(arg["value"])
                    continue
                if arg["kind"] == "input":
                    t = tvm.runtime.tensor(data[arg["key"]], dev)
                else:
                    t = tvm.runtime.empty(arg["shape"], arg["dtype"], dev)
                args.append(t)
                tensors.append(t.data_ptr())
            clear()
            mod[case_["function"]](*args)
            runs.append({"log": log(), "tensors": tensors})
        image = hook.compile_source(mod.imports[0].inspect_source(), "sm_80")["image"]
        handles = {n: sum(t == "handle" for t in k["arg_types"]) for n, k in info["kernels"].items()}
        out[case_["name"]] = {"runs": runs, "fnv": fnv1a(image), "kernels": sorted(info["kernels"]),
                              "handles": handles}
except RuntimeError as err:
    result(error=str(err))
    sys.exit(0)
result(cases=out)
"""


def test_artifacts_reach_the_driver_as_apache_tvm_launches_them(fake):
    r = run_fake(fake, "from conftest import ARTIFACTS\n" + ARTIFACT_SCRIPT)
    if "error" in r:
        if has_nvrtc():
            pytest.fail(r["error"])
        assert "no usable NVRTC was found" in r["error"]
        pytest.skip(f"NVRTC not installed; the artifacts hold CUDA source: {r['error'][:200]}")
    cases = r["cases"]
    for name, c in cases.items():
        log = "".join(run["log"] for run in c["runs"])
        launches = parse_log(log, "launch")
        assert {ln["kernel"] for ln in launches} == set(c["kernels"]), name
        # The image loaded is exactly what NVRTC makes for the device's sm_80, once per loaded
        # artifact (each run loads the artifact afresh and releases it: its CUmodule goes with it).
        loads = parse_log(log, "module_load")
        assert 1 <= len(loads) <= len(c["runs"]), name
        assert all(ld["kind"] == "cubin" and ld["fnv"] == c["fnv"] for ld in loads), name
        assert all(len(parse_log(run["log"], "module_load")) <= 1 for run in c["runs"]), name
        for run in c["runs"]:
            # The buffers each kernel receives, in order: exactly the call's tensors (apache-tvm
            # passes a kernel its buffers sorted by name, which these artifacts' call order
            # follows); the two kernels of `workspace` share them with the workspace pointer.
            passed = []
            for ln in parse_log(run["log"], "launch"):
                params = [int(p, 16) for p in ln["params"].split(",")]
                passed.append(params[: c["handles"][ln["kernel"]]])
            if name == "workspace":
                from_call = [[p for p in ps if p in run["tensors"]] for ps in passed]
                assert sorted(sum(from_call, [])) == sorted(run["tensors"]), (name, passed)
                assert all(ps == sorted(ps, key=run["tensors"].index) for ps in from_call), passed
            else:
                assert passed == [run["tensors"]], (name, passed, run["tensors"])

    def launch(name, i=0, call=0):
        return parse_log(cases[name]["runs"][call]["log"], "launch")[i]

    assert (launch("add")["grid"], launch("add")["block"]) == ("16,1,1", "64,1,1")
    assert launch("multi_out")["params"].split(",")[4:] == ["3fc00000", "3"]  # alpha, beta
    n17, n1000 = launch("dyn_muladd", call=0), launch("dyn_muladd", call=1)
    assert n17["params"].split(",")[3] == "11" and n17["grid"] == "1,1,1"
    assert n1000["params"].split(",")[3] == "3e8" and n1000["grid"] == "16,1,1"
    assert launch("matmul")["block"] == "16,16,1" and launch("matmul")["grid"] == "3,4,1"
    assert launch("row_sum")["block"] == "32,1,1" and launch("row_sum")["grid"] == "64,1,1"
    ws = cases["workspace"]["runs"][0]["log"]
    assert "alloc ctx=0 bytes=2097152" in ws  # TVMBackendAllocWorkspace(2, ...) via the pool
    assert [ln["kernel"] for ln in parse_log(ws, "launch")] == ["workspace_kernel", "workspace_kernel_1"]


def test_rejected_cached_image_is_recompiled(fake, tmp_path):
    if not has_nvrtc():
        pytest.skip("needs NVRTC")
    add_so = str(ARTIFACTS / "cuda" / "add.so")
    r = run_fake(
        fake,
        f"""
        mod = tvm.runtime.load_module({add_so!r})
        hook.compile_source(mod.imports[0].inspect_source(), "sm_80")  # fills the cache
        mod = tvm.runtime.load_module({add_so!r})
        a = tvm.runtime.tensor(np.ones(1024, "float32"), tvm.cuda(0))
        clear()
        mod["add"](a, a, a)
        result(log=log())
        """,
        FAKE_CUDA_REJECT_LOADS="1",
        TVM_CUDA_CACHE_DIR=str(tmp_path / "cache"),
    )
    log = r["log"]
    assert "module_load rejected" in log and "module_load ctx=0 kind=cubin" in log
    assert "launch kernel=add_kernel" in log


def test_relax_models_launch_their_kernels(fake):
    r = run_fake(
        fake,
        """
        from conftest import ARTIFACTS, MANIFEST
        dev = tvm.cuda(0)
        out = {}
        try:
            for c in [c for c in MANIFEST["cases"] if c["target"] == "cuda" and c["kind_of_case"] == "vm"]:
                clear()
                vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(ARTIFACTS / c["file"])), dev)
                for call in c["calls"]:
                    data = np.load(ARTIFACTS / call["npz"])
                    vm["main"](*[tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]])
                out[c["name"]] = {"log": log(), "kernels": c["device_kernels"], "calls": len(c["calls"])}
        except RuntimeError as err:
            result(error=str(err))
            sys.exit(0)
        result(models=out)
        """,
    )
    if "error" in r:
        # Only a machine without NVRTC may lack what these artifacts need (they hold CUDA source).
        if "NVRTC" in r["error"] and not has_nvrtc():
            pytest.skip(r["error"][:300])
        pytest.fail(r["error"])
    for name, m in r["models"].items():
        launched = [ln["kernel"] for ln in parse_log(m["log"], "launch")]
        assert set(launched) == set(m["kernels"]), name
        assert len(launched) == len(m["kernels"]) * m["calls"], name
        assert len(parse_log(m["log"], "module_load")) == 1, name  # loaded once, reused
