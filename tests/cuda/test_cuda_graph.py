"""CUDA graphs (vm.builtin.cuda_graph.*) with models apache-tvm 0.27 compiled with
``relax.backend.use_cuda_graph`` (tests/artifacts/cuda_graph, generate_cuda_graph.py).

On the fake driver (no GPU; it records capture and replay): the first call of a captured region
runs it once as it is, then captures it on a stream of its own and instantiates the graph; later
calls replay that graph on the VM's current stream with the same kernels and buffers and capture
nothing; a new batch size captures again; the graphs go with the VM; a driver without the graph
entry points gives a clear error.  On a GPU: the models match numpy, call after call.
"""

from __future__ import annotations

import json
import textwrap

import fakes
import numpy as np
import pytest
from cuda_support import (
    HERE,
    cuda_device,
    has_nvrtc,
    nvrtc_or_skip,
    parse_log,
)

import tvm
from conftest import ARTIFACTS, REPO, child_result, run_python

GRAPH_DIR = ARTIFACTS / "cuda_graph"
MANIFEST = json.loads((GRAPH_DIR / "manifest.json").read_text())
CASES = {c["name"]: c for c in MANIFEST["cases"]}

PRELUDE = f"""
import sys
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
from children.on_fake_cuda import *
fake.fake_cuda_live_graph_execs.restype = ctypes.c_long
ARTIFACTS = {str(ARTIFACTS)!r}
CASES = {{c["name"]: c for c in json.load(open({str(GRAPH_DIR / "manifest.json")!r}))["cases"]}}
dev = tvm.cuda(0)

def load_vm(name):
    # Every kernel's parameters are recorded (their values are the buffer pointers).
    mod = tvm.runtime.load_module(os.path.join(ARTIFACTS, CASES[name]["file"]))
    stack = [mod]
    while stack:
        m = stack.pop()
        stack.extend(m.imports)
        if m.kind == "cuda":
            for kernel, k in hook.describe_module(m)["kernels"].items():
                expect_params(kernel, len(k["arg_types"]))
    return tvm.runtime.vm.VirtualMachine(mod, dev)

def inputs(name, i):
    call = CASES[name]["calls"][i]
    data = np.load(os.path.join(ARTIFACTS, call["npz"]))
    return [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]

def calls(vm, name, order):
    # The driver log of each call, in order.
    logs = []
    for i in order:
        fake.clear_log()
        vm["main"](*inputs(name, i))
        dev.sync()
        logs.append(log())
    return logs
"""


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("cuda"))


def run_fake(fake: str, body: str) -> dict:
    proc = run_python(PRELUDE + textwrap.dedent(body), env={"TVM_CUDA_DRIVER_LIBRARY": fake})
    r = child_result(proc)
    if "error" in r and "NVRTC" in r["error"] and not has_nvrtc():
        # The fixtures hold CUDA source: only a machine without NVRTC may fail to load them.
        pytest.skip(f"NVRTC not installed; the artifacts hold CUDA source: {r['error'][:200]}")
    assert "error" not in r, r["error"]
    return r


def kernels(log: str, kind: str) -> list[str]:
    return [ln["kernel"] for ln in parse_log(log, kind) if "kernel" in ln]


def between(log: str, start: str, end: str) -> str:
    """The log lines after the first line starting with `start`, up to the next starting with `end`."""
    lines = log.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith(start))
    last = next(i for i, ln in enumerate(lines) if i > first and ln.startswith(end))
    return "\n".join(lines[first + 1 : last])


def check_first_call_captures(log: str, case: dict) -> dict:
    """The first call of a region: run as it is, captured on its own stream, instantiated, not
    launched (what it computed in the plain run is the result); returns the captured graph."""
    begin, end = parse_log(log, "capture_begin"), parse_log(log, "capture_end")
    inst = parse_log(log, "graph_instantiate")
    assert len(begin) == len(end) == len(inst) == 1, log
    assert begin[0]["stream"] != "0" and end[0]["stream"] == begin[0]["stream"], (
        log
    )  # never the legacy stream
    assert begin[0]["mode"] == "0", log  # CU_STREAM_CAPTURE_MODE_GLOBAL, as apache-tvm
    assert int(end[0]["nodes"]) == case["captured_launches"], log
    assert inst[0]["graph"] == end[0]["graph"] and "graph_launch" not in log, log
    captured = between(log, "capture_begin", "capture_end")
    nodes = parse_log(captured, "graph_node")
    assert {n["kernel"] for n in nodes} == set(case["captured_kernels"]), log
    # Nothing but recording inside the capture: no allocation, synchronisation or direct launch.
    assert all(ln.startswith("graph_node") for ln in captured.splitlines()), captured
    # Launched directly: the region once before the capture, and every other kernel.
    direct = kernels(log, "launch")
    assert sorted(direct) == sorted(case["direct_kernels"] + [n["kernel"] for n in nodes]), log
    assert all(ln["stream"] == "0" for ln in parse_log(log, "launch")), log  # current stream restored
    assert "stream_destroy id=" + begin[0]["stream"] in log, log  # the capture stream is not kept
    return {"exec": inst[0]["exec"], "nodes": nodes}


def check_replay(log: str, graph: dict, case: dict, stream: str = "0") -> None:
    """A later call: one launch of the captured graph (same kernels, same parameter values, so
    the same buffers), no capture, and only the uncaptured kernels launched directly."""
    assert "capture_begin" not in log and "graph_instantiate" not in log, log
    (launch,) = parse_log(log, "graph_launch")
    assert launch["exec"] == graph["exec"] and launch["stream"] == stream, log
    replayed = parse_log(log, "replay")
    assert [(r["kernel"], r["params"], r["grid"], r["block"]) for r in replayed] == [
        (n["kernel"], n["params"], n["grid"], n["block"]) for n in graph["nodes"]
    ], log
    assert sorted(kernels(log, "launch")) == sorted(case["direct_kernels"]), log


def test_manifest_describes_captured_regions():
    for case in CASES.values():
        assert case["capture_regions"] == 1 and case["captured_launches"] == 2, case["name"]
        assert set(case["captured_kernels"]) <= set(case["device_kernels"]), case["name"]


def test_static_model_captures_once_then_replays(fake):
    r = run_fake(
        fake,
        """
        try:
            vm = load_vm("mlp_graph")
            logs = calls(vm, "mlp_graph", [0, 1, 0])
            live = fake.fake_cuda_live_graph_execs()
            # On a stream the user made current: the replay goes there.
            stream = dev.create_raw_stream()
            dev.set_raw_stream(stream)
            logs += calls(vm, "mlp_graph", [1])
            dev.set_raw_stream(0)
            fake.clear_log()
            del vm
            gc.collect()
        except RuntimeError as err:
            result(error=str(err))
            sys.exit(0)
        result(logs=logs, live=live, after=fake.fake_cuda_live_graph_execs(), freed=log())
        """,
    )
    case = CASES["mlp_graph"]
    graph = check_first_call_captures(r["logs"][0], case)
    for log in r["logs"][1:3]:
        check_replay(log, graph, case)
    user_stream = parse_log(r["logs"][3], "launch")[0]["stream"]
    assert user_stream != "0"
    check_replay(r["logs"][3], graph, case, stream=user_stream)
    # The first layer (launched directly) writes the buffer the graph's first node reads: the
    # storage of get_cached_alloc is the same on every call.
    first_layer = [
        ln for ln in parse_log(r["logs"][1], "launch") if ln["kernel"] == "fused_matmul_add_relu_kernel"
    ]
    # (The weights are distinct constants and the input is new each call: what both kernels
    # have in common is the intermediate buffer.)
    shared = set(first_layer[0]["params"].split(",")) & set(graph["nodes"][0]["params"].split(","))
    assert len(shared) == 1, (first_layer, graph)
    # One graph while the VM lives, destroyed with it.
    assert r["live"] == 1 and r["after"] == 0
    assert parse_log(r["freed"], "graph_exec_destroy") == [{"exec": graph["exec"]}]


def test_symbolic_batch_captures_per_shape(fake):
    r = run_fake(
        fake,
        """
        try:
            vm = load_vm("mlp_graph_dyn")
            logs = calls(vm, "mlp_graph_dyn", [0, 1, 2, 1])  # n = 3, 5, 3, 5
            live = fake.fake_cuda_live_graph_execs()
            # Another VM of the same executable keeps graphs of its own.
            other = load_vm("mlp_graph_dyn")
            other_logs = calls(other, "mlp_graph_dyn", [0])
            fake.clear_log()
            del vm, other
            gc.collect()
        except RuntimeError as err:
            result(error=str(err))
            sys.exit(0)
        result(logs=logs, other=other_logs, live=live, after=fake.fake_cuda_live_graph_execs(), freed=log())
        """,
    )
    case = CASES["mlp_graph_dyn"]
    n3 = check_first_call_captures(r["logs"][0], case)
    n5 = check_first_call_captures(r["logs"][1], case)
    assert n3["exec"] != n5["exec"]
    # The captured kernels got the batch size: the two graphs differ in their parameters.
    assert [n["params"] for n in n3["nodes"]] != [n["params"] for n in n5["nodes"]]
    check_replay(r["logs"][2], n3, case)
    check_replay(r["logs"][3], n5, case)
    assert r["live"] == 2
    other = check_first_call_captures(r["other"][0], case)
    assert other["exec"] not in (n3["exec"], n5["exec"])
    assert r["after"] == 0
    assert sorted(d["exec"] for d in parse_log(r["freed"], "graph_exec_destroy")) == sorted(
        [n3["exec"], n5["exec"], other["exec"]]
    )


def test_driver_without_graph_entry_points():
    old = fakes.build("cuda", defines=("FAKE_CUDA_NO_GRAPHS",), filename="libcuda_old.so")
    r = run_fake(
        str(old),
        """
        try:
            vm = load_vm("mlp_graph")
        except RuntimeError as err:
            result(error=str(err))
            sys.exit(0)
        try:
            vm["main"](*inputs("mlp_graph", 0))
            result(raised=None)
        except RuntimeError as err:
            # The VM still works for the next call (which fails the same way, cleanly).
            again = ""
            try:
                vm["main"](*inputs("mlp_graph", 0))
            except RuntimeError as err2:
                again = str(err2)
            result(raised=str(err), again=again, log=log())
        """,
    )
    assert r["raised"] is not None, r
    for text in ("cuStreamBeginCapture_v2", "cuGraphLaunch", "use_cuda_graph", "driver"):
        assert text in r["raised"], r["raised"]
    assert "cuStreamBeginCapture_v2" in r["again"]
    assert "capture_begin" not in r["log"]


# ------------------------------------------------------------------------ on a GPU


@pytest.fixture(scope="module")
def dev():
    device = cuda_device(tvm)
    nvrtc_or_skip(int(device.driver_version) // 1000)
    return device


def run_case(vm, case: dict, call: dict, dev) -> np.ndarray:
    data = np.load(ARTIFACTS / call["npz"])
    out = vm["main"](*[tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]])
    dev.sync()  # the work may be on a stream the user made current
    got = out.numpy()
    np.testing.assert_allclose(got, data[call["outputs"][0]], rtol=case["rtol"], atol=case["atol"])
    return got


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_matches_numpy_call_after_call(name, dev):
    case = CASES[name]
    mod = tvm.runtime.load_module(str(ARTIFACTS / case["file"]))
    vm = tvm.runtime.vm.VirtualMachine(mod, dev)
    # Captures on the first call of each shape, replays on the others: every one must match.
    for _ in range(3):
        for call in case["calls"]:
            run_case(vm, case, call, dev)
    # A second VM captures graphs of its own; the first keeps working.
    other = tvm.runtime.vm.VirtualMachine(mod, dev)
    for call in case["calls"]:
        run_case(other, case, call, dev)
        run_case(vm, case, call, dev)


def test_replays_on_a_user_stream(dev):
    case = CASES["mlp_graph"]
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(ARTIFACTS / case["file"])), dev)
    run_case(vm, case, case["calls"][0], dev)  # captured on the default stream's VM call
    stream = dev.create_raw_stream()
    try:
        dev.set_raw_stream(stream)
        for _ in range(3):
            for call in case["calls"]:
                run_case(vm, case, call, dev)
    finally:
        dev.set_raw_stream(0)
        dev.free_raw_stream(stream)
