"""Concurrency stress of the installed tvm-runtime: many Python threads on one device at once.

    python tests/faults/stress.py --seconds 120 --threads 8 --out results/stress.md
    nox -s stress -- 120                                  (the same, against fresh wheels)

Scenarios (each on every device this machine has: cpu, opencl, vulkan, cuda):

* ``first-use``: a fresh interpreter whose threads, released together by a barrier, make the
  first use of a backend (``Device.exist``, loading an artifact, running it); variants with
  ``TVM_DEVICE_BACKEND_AUTOLOAD=0`` (every thread calls ``tvm.backend.loader.load``) and with
  every thread running ``import tvm`` itself.  Repeated in new interpreters until time is up.
* ``loads-and-calls``: threads load real artifacts over and over (concurrent ``load_module``
  and unload) while calling kernels of a module they share.
* ``shared-vm``: one Relax ``VirtualMachine`` called by every thread (two input shapes).
* ``parallel-cpu``: a kernel with a parallel loop (``TVMBackendParallelLaunch``) called from
  every thread at once, the runtime's thread pool shared by all of them.

Every call's result is compared with numpy.  Each scenario runs in a child interpreter with a
deadline: a child that has not finished 60 s after its time is up is a deadlock, reported with
the stacks of all its threads (faulthandler).  The exit status is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(os.environ.get("TVM_REPO_ROOT", Path(__file__).resolve().parents[2]))
ARTIFACTS = REPO / "tests" / "artifacts"
DEVICE_KINDS = ("cpu", "opencl", "vulkan", "cuda")
HANG_MARGIN_S = 60.0

# ---------------------------------------------------------------------------------- children
# Everything below up to the parent section runs inside a child interpreter.


def load_cases() -> dict[tuple[str, str], dict[str, Any]]:
    """Manifest cases keyed by (target, name); Vulkan fixtures have their own manifest."""
    cases = {}
    for manifest in (ARTIFACTS / "manifest.json", ARTIFACTS / "vulkan" / "manifest.json"):
        for c in json.loads(manifest.read_text())["cases"]:
            cases[(c.get("target", "vulkan"), c["name"])] = c
    return cases


class Checker:
    """Runs manifest cases on a device and compares every output with the stored numpy result."""

    def __init__(self, tvm: Any, kind: str) -> None:
        import numpy as np

        self.np, self.tvm, self.kind = np, tvm, kind
        self.dev = tvm.device(kind, 0)
        self.cases = load_cases()
        self.data: dict[str, Any] = {}

    def npz(self, rel: str) -> Any:
        if rel not in self.data:
            self.data[rel] = dict(self.np.load(ARTIFACTS / rel))
        return self.data[rel]

    def case(self, name: str) -> dict[str, Any]:
        return self.cases[(self.kind, name)]

    def load(self, name: str) -> Any:
        return self.tvm.runtime.load_module(str(ARTIFACTS / self.case(name)["file"]))

    def run_kernel(self, name: str, mod: Any) -> None:
        c = self.case(name)
        call = c["calls"][0]
        data = self.npz(call["npz"])
        args, outputs = [], []
        for arg in call["args"]:
            if arg["kind"] == "input":
                args.append(self.tvm.runtime.tensor(data[arg["key"]], self.dev))
            elif arg["kind"] == "output":
                out = self.tvm.runtime.empty(arg["shape"], arg["dtype"], self.dev)
                args.append(out)
                outputs.append((out, data[arg["key"]]))
            else:
                args.append(arg["value"])
        mod[c["function"]](*args)
        for out, expected in outputs:
            self.np.testing.assert_allclose(out.numpy(), expected, rtol=c["rtol"], atol=c["atol"])

    def run_vm(self, name: str, vm: Any, which: int) -> None:
        c = self.case(name)
        call = c["calls"][which % len(c["calls"])]
        data = self.npz(call["npz"])
        args = [self.tvm.runtime.tensor(data[a["key"]], self.dev) for a in call["args"]]
        result = vm[c["function"]](*args)
        outs = list(result) if len(call["outputs"]) > 1 else [result]
        for out, key in zip(outs, call["outputs"]):
            self.np.testing.assert_allclose(out.numpy(), data[key], rtol=c["rtol"], atol=c["atol"])


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = 0
        self.errors: list[str] = []
        self.error_count = 0

    def ok(self, n: int = 1) -> None:
        with self.lock:
            self.calls += n

    def failed(self, err: BaseException) -> None:
        with self.lock:
            self.error_count += 1
            if len(self.errors) < 5:
                self.errors.append(f"{type(err).__name__}: {err}"[:2000])


def run_threads(threads: int, worker: Callable[[int], None], stats: Stats) -> None:
    def guarded(i: int) -> None:
        try:
            worker(i)
        except BaseException as err:  # noqa: BLE001 - every failure is reported
            stats.failed(err)

    pool = [threading.Thread(target=guarded, args=(i,), name=f"stress-{i}") for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


def child_first_use(kind: str, threads: int, mode: str, stats: Stats) -> None:
    """One round: the first use of `kind` by `threads` threads released at the same moment."""
    barrier = threading.Barrier(threads)
    if mode != "import":
        import tvm  # noqa: F401 - the backends' first use, not the import, is under test

    def worker(i: int) -> None:
        barrier.wait()
        if mode == "import":
            import tvm  # every thread imports it at once
        import tvm

        if mode == "loader" and kind != "cpu":
            tvm.backend.loader.load(kind)
        if not tvm.device(kind, 0).exist:
            raise RuntimeError(f"tvm.{kind}(0) does not exist in a thread of a fresh interpreter")
        checker = Checker(tvm, kind)
        checker.run_kernel("add", checker.load("add"))
        stats.ok()

    run_threads(threads, worker, stats)


def child_loads_and_calls(kind: str, threads: int, deadline: float, stats: Stats) -> None:
    import tvm

    names = [n for n in ("add", "matmul", "dyn_muladd", "multi_out", "row_sum") if (kind, n) in load_cases()]
    shared_checker = Checker(tvm, kind)
    shared = {n: shared_checker.load(n) for n in names}

    def worker(i: int) -> None:
        checker = Checker(tvm, kind)
        k = 0
        while k == 0 or time.monotonic() < deadline:  # at least one call per thread
            name = names[(i + k) % len(names)]
            if k % 2 == 0:
                checker.run_kernel(name, checker.load(name))  # a private load, dropped after
            else:
                checker.run_kernel(name, shared[name])
            k += 1
            stats.ok()

    run_threads(threads, worker, stats)


def child_shared_vm(kind: str, threads: int, deadline: float, stats: Stats) -> None:
    import tvm
    from tvm.runtime.vm import VirtualMachine

    checker = Checker(tvm, kind)
    vm = VirtualMachine(checker.load("mlp_dyn"), checker.dev)

    def worker(i: int) -> None:
        k = 0
        while k == 0 or time.monotonic() < deadline:
            checker.run_vm("mlp_dyn", vm, i + k)  # the two calls have different batch sizes
            k += 1
            stats.ok()

    run_threads(threads, worker, stats)


def child_parallel_cpu(threads: int, deadline: float, stats: Stats) -> None:
    import numpy as np

    import tvm

    mod = tvm.runtime.load_module(str(ARTIFACTS / "cpu" / "parallel_scale.so"))
    f = mod["parallel_scale"]
    dev = tvm.cpu(0)

    def worker(i: int) -> None:
        rng = np.random.default_rng(i)
        a_np = rng.standard_normal((256, 256)).astype("float32")
        a = tvm.runtime.tensor(a_np, dev)
        b = tvm.runtime.empty((256, 256), "float32", dev)
        expected = a_np * 2 + 1
        calls = 0
        while calls == 0 or time.monotonic() < deadline:
            calls += 1
            f(a, b)
            np.testing.assert_allclose(b.numpy(), expected, rtol=1e-6, atol=1e-6)
            stats.ok()

    run_threads(threads, worker, stats)


def child_main(args: argparse.Namespace) -> int:
    import faulthandler

    # A deadlock shows every thread's stack before the parent gives up on this child.
    faulthandler.dump_traceback_later(args.seconds + HANG_MARGIN_S - 5, exit=True)
    stats = Stats()
    start = time.monotonic()
    deadline = start + args.seconds
    if args.child == "first-use":
        child_first_use(args.device, args.threads, args.mode, stats)
    elif args.child == "loads-and-calls":
        child_loads_and_calls(args.device, args.threads, deadline, stats)
    elif args.child == "shared-vm":
        child_shared_vm(args.device, args.threads, deadline, stats)
    elif args.child == "parallel-cpu":
        child_parallel_cpu(args.threads, deadline, stats)
    faulthandler.cancel_dump_traceback_later()
    report = {"calls": stats.calls, "errors": stats.errors, "error_count": stats.error_count}
    report["seconds"] = round(time.monotonic() - start, 3)
    print("STRESS:" + json.dumps(report), flush=True)
    return 0


# ------------------------------------------------------------------------------------ parent


def available_devices(python: str) -> dict[str, bool]:
    code = f"import json, tvm; print(json.dumps({{k: tvm.device(k, 0).exist for k in {DEVICE_KINDS!r}}}))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_child(python: str, scenario: str, device: str, threads: int, seconds: float, **kw: Any) -> dict:
    cmd = [python, str(Path(__file__).resolve()), "--child", scenario, "--device", device]
    cmd += ["--threads", str(threads), "--seconds", str(seconds), "--mode", kw.get("mode", "exist")]
    env = dict(os.environ, TVM_REPO_ROOT=str(REPO), **kw.get("env", {}))
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=seconds + HANG_MARGIN_S)
    except subprocess.TimeoutExpired as err:
        stderr = err.stderr.decode(errors="replace") if isinstance(err.stderr, bytes) else err.stderr or ""
        return {
            "calls": 0,
            "error_count": 1,
            "errors": [f"DEADLOCK (killed after {seconds + HANG_MARGIN_S:.0f} s)\n{stderr[-4000:]}"],
        }
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("STRESS:")]
    if proc.returncode != 0 or not lines:
        what = (
            "DEADLOCK (stacks dumped)"
            if "Timeout (" in proc.stderr
            else f"child exited with {proc.returncode}"
        )
        return {"calls": 0, "error_count": 1, "errors": [f"{what}\n{proc.stderr[-4000:]}"]}
    report = json.loads(lines[-1][len("STRESS:") :])
    report["wall"] = round(time.monotonic() - start, 3)
    return report


def plan(devices: dict[str, bool], quick: bool) -> list[tuple[str, str, dict[str, Any]]]:
    """(scenario, device, options) in the order they run; shares of the time budget follow."""
    steps: list[tuple[str, str, dict[str, Any]]] = []
    present = [k for k in DEVICE_KINDS if devices.get(k)]
    for kind in present:
        if kind != "cpu":
            steps.append(("first-use", kind, {"mode": "exist"}))
            steps.append(("first-use", kind, {"mode": "loader", "env": {"TVM_DEVICE_BACKEND_AUTOLOAD": "0"}}))
    steps.append(("first-use", present[-1], {"mode": "import"}))
    for kind in present:
        steps.append(("loads-and-calls", kind, {}))
    for kind in present:
        if kind != "vulkan":  # no Relax VM fixtures for Vulkan (apache-tvm cannot emit it)
            steps.append(("shared-vm", kind, {}))
    steps.append(("parallel-cpu", "cpu", {"env": {"TVM_NUM_THREADS": "4"}}))
    return steps


def run_all(python: str, seconds: float, threads: int, quick: bool) -> list[dict[str, Any]]:
    devices = available_devices(python)
    steps = plan(devices, quick)
    timed = [s for s in steps if s[0] != "first-use"]
    first_use = [s for s in steps if s[0] == "first-use"]
    # Timed scenarios share 3/4 of the budget; first-use rounds (one interpreter each) the rest.
    per_timed = max(0.5, 0.75 * seconds / max(1, len(timed)))
    first_use_budget = 0.25 * seconds
    rows = []
    for scenario, kind, opts in first_use:
        rounds, calls, errors, error_count = 0, 0, [], 0
        start = time.monotonic()
        while True:
            r = run_child(python, scenario, kind, threads, 30, **opts)
            rounds += 1
            calls += r["calls"]
            error_count += r["error_count"]
            errors += r["errors"][: 5 - len(errors)]
            spent = time.monotonic() - start
            if quick or spent > first_use_budget / len(first_use) or error_count:
                break
        rows.append(
            {
                "scenario": f"{scenario} ({opts['mode']})",
                "device": kind,
                "threads": threads,
                "rounds": rounds,
                "calls": calls,
                "seconds": round(spent, 2),
                "error_count": error_count,
                "errors": errors,
            }
        )
    for scenario, kind, opts in timed:
        r = run_child(python, scenario, kind, threads, per_timed, **opts)
        rows.append({"scenario": scenario, "device": kind, "threads": threads, "rounds": 1, **r})
    return rows


HELD = {
    "first-use": "every thread saw the device, loaded and ran `add` correctly; no deadlock",
    "loads-and-calls": "every result matched numpy while other threads loaded and unloaded modules",
    "shared-vm": "every VM result matched numpy (two batch sizes interleaved)",
    "parallel-cpu": "every parallel-loop result matched numpy with the pool shared by all threads",
}


def markdown(rows: list[dict[str, Any]], seconds: float, threads: int) -> str:
    import platform

    lines = [
        "# Concurrency stress (tests/faults/stress.py)",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}: budget {seconds:g} s, "
        f"{threads} Python threads per scenario. Command: "
        f"`python tests/faults/stress.py --seconds {seconds:g} --threads {threads}` "
        f"(or `nox -s stress -- {seconds:g}`).",
        "",
        "| scenario | device | threads | interpreters | calls checked | seconds | failures | what held |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        base = r["scenario"].split(" ")[0]
        held = HELD[base] if r["error_count"] == 0 else "FAILED: " + r["errors"][0].splitlines()[0][:200]
        lines.append(
            f"| {r['scenario']} | {r['device']} | {r['threads']} | {r['rounds']} | {r['calls']} | "
            f"{r.get('seconds', 0)} | {r['error_count']} | {held} |"
        )
    failed = [r for r in rows if r["error_count"]]
    lines += ["", "All scenarios held." if not failed else f"{len(failed)} scenario(s) FAILED.", ""]
    for r in failed:
        lines += [f"## {r['scenario']} on {r['device']}", "", "```", *r["errors"], "```", ""]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=120.0, help="total time budget (default 120)")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--quick", action="store_true", help="one first-use round per variant")
    p.add_argument("--out", type=Path, help="write the markdown report here")
    p.add_argument("--json", type=Path, help="write the rows as JSON here")
    p.add_argument("--python", default=sys.executable, help="the interpreter with tvm-runtime installed")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--device", default="cpu", help=argparse.SUPPRESS)
    p.add_argument("--mode", default="exist", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child_main(args)
    rows = run_all(args.python, args.seconds, args.threads, args.quick)
    text = markdown(rows, args.seconds, args.threads)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if any(r["error_count"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
