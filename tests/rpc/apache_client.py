"""Scenarios run by apache-tvm 0.27's own RPC client against a server under test.

This file runs inside the apache-tvm client venv (never the runtime venv): the tests start it as
a subprocess, one scenario per call, and read the JSON line it prints last.  Each scenario
checks its results with numpy and raises on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import tvm
from tvm import rpc

RESULT: dict = {}


def manifest_case(art: Path, target: str, name: str) -> dict:
    for c in json.loads((art / "manifest.json").read_text())["cases"]:
        if c["target"] == target and c["name"] == name:
            return c
    raise KeyError(f"{target}/{name}")


def kernel_call(art: Path, target: str, name: str) -> tuple[str, str, list]:
    """(file, function, [(kind, value)]) of one kernel fixture call; kind: input/output/scalar."""
    if target == "vulkan":  # the Vulkan fixtures keep their own case list (vulkan/cases.py)
        data = np.load(art / "vulkan" / f"{name}.npz")
        keys = sorted(k for k in data.files if k.endswith("_0"))
        ins = [("input", data[k]) for k in keys if k[0] != "c"]
        return f"vulkan/{name}.so", name, [*ins, ("output", data["c_0"])]
    case = manifest_case(art, target, name)
    call = case["calls"][0]
    data = np.load(art / call["npz"])
    spec = []
    for arg in call["args"]:
        if arg["kind"] in ("input", "output"):
            spec.append((arg["kind"], data[arg["key"]]))
        else:
            spec.append(("scalar", arg["value"]))
    return case["file"], case["function"], spec


def make_args(spec: list, dev) -> tuple[list, list]:
    """Remote call arguments for ``spec`` and the (tensor, expected) pairs of its outputs."""
    args, outputs = [], []
    for kind, value in spec:
        if kind == "input":
            args.append(tvm.runtime.tensor(value, dev))
        elif kind == "output":
            out = tvm.runtime.empty(value.shape, str(value.dtype), dev)
            args.append(out)
            outputs.append((out, value))
        else:
            args.append(value)
    return args, outputs


def upload_and_load(sess, art: Path, file: str):
    path = art / file
    sess.upload(str(path))
    return sess.load_module(path.name)


def scenario_kernel(sess, args) -> None:
    art = Path(args.artifacts)
    file, func, spec = kernel_call(art, args.target, args.case)
    mod = upload_and_load(sess, art, file)
    dev = sess.device(args.target)
    assert dev.exist, f"remote {args.target} device does not exist"
    call_args, outputs = make_args(spec, dev)
    mod[func](*call_args)
    for got, want in outputs:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    # the same call timed on the server, with the cache flush the tuners ask for on CPUs
    preproc = "cache_flush_cpu_non_first_arg" if args.target == "cpu" else ""
    timer = mod.time_evaluator(func, dev, number=5, repeat=3, min_repeat_ms=1, f_preproc=preproc)
    res = timer(*call_args)
    assert len(res.results) == 3 and all(r > 0 for r in res.results), res.results
    RESULT.update(device=str(dev), mean_s=res.mean, outputs=len(outputs))


def scenario_copies(sess, args) -> None:
    dev = sess.device(args.target)
    cpu = sess.cpu(0)
    x = np.arange(4096, dtype="float32").reshape(64, 64)
    a = tvm.runtime.tensor(x, dev)  # host -> remote device
    np.testing.assert_array_equal(a.numpy(), x)  # remote device -> host
    b = tvm.runtime.empty((64, 64), "float32", dev)
    a.copyto(b)  # remote -> remote on the same device (a server-side copy)
    np.testing.assert_array_equal(b.numpy(), x)
    h = tvm.runtime.empty((64, 64), "float32", cpu)
    h.copyfrom(x)
    c = tvm.runtime.empty((64, 64), "float32", cpu)
    h.copyto(c)  # remote cpu -> remote cpu
    np.testing.assert_array_equal(c.numpy(), x)
    c.copyfrom(x[::-1].copy())  # host -> existing remote tensor
    np.testing.assert_array_equal(c.numpy(), x[::-1])
    big = np.random.default_rng(0).standard_normal(1 << 20).astype("float32")  # 4 MB round trip
    np.testing.assert_array_equal(tvm.runtime.tensor(big, dev).numpy(), big)
    RESULT.update(device=str(dev))


def scenario_vm(sess, args) -> None:
    art = Path(args.artifacts)
    case = manifest_case(art, args.target, args.case)
    mod = upload_and_load(sess, art, case["file"])
    dev = sess.device(args.target)
    vm = tvm.runtime.vm.VirtualMachine(mod, dev)
    for call in case["calls"]:
        data = np.load(art / call["npz"])
        inputs = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
        out = vm[case["function"]](*inputs)
        if case.get("output_is_tuple"):
            # a remote tuple comes back as an RPCObjectRef; read its items on the server
            get_item = sess.get_function("ffi.ArrayGetItem")
            outs = [get_item(out, i) for i in range(len(call["outputs"]))]
        else:
            outs = [out]
        for got, key in zip(outs, call["outputs"]):
            np.testing.assert_allclose(got.numpy(), data[key], rtol=case["rtol"], atol=case["atol"])
    RESULT.update(device=str(dev), calls=len(case["calls"]))


def scenario_error(sess, args) -> None:
    art = Path(args.artifacts)
    file, func, spec = kernel_call(art, "cpu", "add")
    mod = upload_and_load(sess, art, file)
    dev = sess.cpu(0)
    call_args, outputs = make_args(spec, dev)
    a = call_args[0]
    messages = []
    for bad in (lambda: mod[func](a), lambda: sess.load_module("missing.so")):
        try:
            bad()
        except tvm.error.RPCError as err:
            messages.append(str(err))
        else:
            raise AssertionError("a failing remote call did not raise")
    assert "RPCError" in messages[0] and "argument" in messages[0], messages[0]
    assert "missing.so" in messages[1], messages[1]
    # the session is still usable after remote errors
    mod[func](*call_args)
    np.testing.assert_allclose(outputs[0][0].numpy(), outputs[0][1], rtol=1e-6)
    RESULT.update(messages=messages)


def scenario_timeout(sess, args) -> None:
    """A remote call that outlives the session's -timeout ends with RPCSessionTimeoutError."""
    art = Path(args.artifacts)
    file, func, spec = kernel_call(art, "cpu", "add")
    mod = upload_and_load(sess, art, file)
    dev = sess.cpu(0)
    tensors, _ = make_args(spec, dev)
    timer = mod.time_evaluator(func, dev, number=1, repeat=1, min_repeat_ms=30000)
    t0 = time.monotonic()
    try:
        timer(*tensors)
    except tvm.error.RPCError as err:
        RESULT.update(error=type(err).__name__, message=str(err)[:300], elapsed=time.monotonic() - t0)
        return
    raise AssertionError("the session did not time out")


def scenario_tracker(_sess, args) -> None:
    tracker = rpc.connect_tracker("127.0.0.1", args.tracker_port)
    ctor = json.loads(args.constructor_args) if args.constructor_args else None
    remote = tracker.request(args.key, session_timeout=60, session_constructor_args=ctor)
    args.target = "cpu"
    args.case = "add"
    scenario_kernel(remote, args)
    RESULT.update(summary_keys=sorted(tracker.summary()["queue_info"]))


def scenario_tiny_call(sess, args) -> None:
    """Round trips of a tiny remote call (benchmark helper): prints per-call seconds."""
    f = sess.get_function("runtime.GetDeviceAttr")
    for _ in range(20):
        f(1, 0, 0)
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for _ in range(args.number):
            f(1, 0, 0)
        times.append((time.perf_counter() - t0) / args.number)
    RESULT.update(times=times)


def scenario_upload(sess, args) -> None:
    blob = bytearray(np.random.default_rng(1).integers(0, 255, args.nbytes, dtype=np.uint8).tobytes())
    upload = sess.get_function("tvm.rpc.server.upload")
    upload("warm.bin", bytearray(16))
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        upload("blob.bin", blob)
        times.append(time.perf_counter() - t0)
    RESULT.update(times=times, nbytes=args.nbytes)


def connect(args):
    """A session as the options ask (key, session timeout, session constructor arguments)."""
    ctor = json.loads(args.constructor_args) if args.constructor_args else None
    return rpc.connect(
        "127.0.0.1",
        args.port,
        key=args.key,
        session_timeout=args.session_timeout,
        session_constructor_args=ctor,
    )


def scenario_refused(_sess, args) -> None:
    """Connecting must fail: records what apache-tvm's client raises."""
    t0 = time.monotonic()
    try:
        connect(args)
    except Exception as err:  # noqa: BLE001 - the error is the result
        RESULT.update(error=type(err).__name__, message=str(err)[-800:], elapsed=time.monotonic() - t0)
        return
    raise AssertionError("the server accepted the session")


def scenario_idle(sess, args) -> None:
    """Idle past the server's idle timeout, then call: records the error."""
    time.sleep(args.idle_s)
    try:
        sess.get_function("runtime.GetDeviceAttr")
    except tvm.error.RPCError as err:
        RESULT.update(error=type(err).__name__, message=str(err)[-500:])
        return
    raise AssertionError("the idle session was not ended")


def _attempt(action) -> str:
    try:
        action()
    except tvm.error.RPCError as err:
        return "refused: " + str(err)[-500:]
    return "ok"


def scenario_attempts(sess, args) -> None:
    """What a session may do beyond running its own upload: each attempt's outcome."""
    art = Path(args.artifacts)
    scenario_kernel(sess, args)  # uploads and runs cpu/add.so: every policy allows that
    on_disk = str(art / "cpu" / "add.so")  # the server runs on this machine: the path exists there
    blob = bytearray(args.nbytes)
    evaluator = lambda: sess.get_function("runtime.RPCTimeEvaluator")  # noqa: E731
    loader = lambda: sess.get_function("ffi.ModuleLoadFromFile")  # noqa: E731
    RESULT["attempts"] = {
        "load_absolute_path": _attempt(lambda: loader()(on_disk)),
        "load_own_upload_by_loader": _attempt(lambda: loader()("./add.so")),
        "time_a_global_by_name": _attempt(
            lambda: evaluator()(None, "ffi.ModuleLoadFromFile", 1, 0, 1, 1, 0, 0, 0, 0, 0, "")
        ),
        "upload_nbytes": _attempt(lambda: sess.upload(blob, "big.bin")),
    }


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("steps", nargs="+", help="scenario[:target[:case]], each in a fresh session")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--key", default="")
    p.add_argument("--tracker-port", type=int, default=0)
    p.add_argument("--artifacts", default="")
    p.add_argument("--session-timeout", type=float, default=0)
    p.add_argument("--constructor-args", default="", help="session_constructor_args as a JSON list")
    p.add_argument("--number", type=int, default=100)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--nbytes", type=int, default=10 << 20)
    p.add_argument("--idle-s", type=float, default=0)
    args = p.parse_args()
    results = []
    for step in args.steps:
        scenario, target, case = (step.split(":") + ["cpu", "add"])[:3]
        args.target, args.case = target, case
        RESULT.clear()
        sess = None
        if scenario not in ("tracker", "refused"):
            sess = connect(args)
        globals()[f"scenario_{scenario}"](sess, args)
        results.append({"step": step, **RESULT})
        del sess
    print(json.dumps({"ok": True, "tvm": tvm.__version__, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
