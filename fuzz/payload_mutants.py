"""Mutant probe: real artifacts with their embedded device payload mutated in place, loaded and
run the way a user would (``tvm.runtime.load_module`` + the host function on the device).

    python fuzz/payload_mutants.py --kind webgpu --count 100 [--seed 1] [--save DIR]

Each mutant is a copy of a real apache-tvm 0.27 fixture (tests/artifacts/<kind>/*.so) with 1-3
bytes of its ``<kind>`` payload changed (a flipped bit, or a random byte); the file keeps its size
and its container stays valid, so the bytes reach the backend's parser, kernel builder and device.
A child interpreter runs the mutants one after another and reports each outcome; when it dies
(abort, signal) or stops answering, the mutant it was running is counted as a crash or a hang and
a fresh child goes on with the next.

Outcomes: ``ran`` (loaded and ran; results may differ), ``error`` (a clear Python exception whose
message reads), ``unreadable`` (an exception whose message cannot be shown: UnicodeDecodeError, or
any kind outside the clear ones), ``crash`` and ``hang``.  The run fails on any of the last three.
``--save`` keeps the payloads of the failing mutants (regression inputs).
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
sys.path.insert(0, str(ROOT / "tests"))
from backend_testing import payloads  # noqa: E402  (the tests' own library-bin reader)

CLEAR_KINDS = ("ValueError", "TypeError", "RuntimeError", "IndexError", "KeyError", "MemoryError")
DEVICE_TYPES = {"webgpu": 15, "vulkan": 7, "opencl": 4}
PER_MUTANT_TIMEOUT = 60.0

CHILD = r"""
import json, sys
import numpy as np
import tvm

kind, device_type = sys.argv[1], int(sys.argv[2])
cases = json.loads(open(sys.argv[3]).read())
clear_kinds = json.loads(sys.argv[4])
dev = tvm.runtime.device(device_type, 0)
assert dev.exist, f"no {kind} device"

def run(case):
    mod = tvm.runtime.load_module(case["path"])
    data = np.load(case["npz"])
    args = []
    for arg in case["args"]:
        if arg["kind"] == "input":
            args.append(tvm.runtime.tensor(data[arg["key"]], dev))
        elif arg["kind"] == "output":
            args.append(tvm.runtime.empty(arg["shape"], arg["dtype"], dev))
        else:
            args.append(arg["value"])
    mod[case["function"]](*args)
    dev.sync()

for i, case in enumerate(cases):
    print(json.dumps({"start": i}), flush=True)
    try:
        run(case)
        out = {"outcome": "ran"}
    except BaseException as err:  # noqa: BLE001 - every outcome is reported
        try:
            message = str(err)
            readable = type(err).__name__ in clear_kinds
        except BaseException as inner:  # noqa: BLE001
            message, readable = f"str() failed: {type(inner).__name__}: {inner}", False
        out = {"outcome": "error" if readable else "unreadable", "kind": type(err).__name__,
               "message": message[:300]}
    print(json.dumps({"done": i, **out}), flush=True)
"""


def fixtures(kind: str) -> list[dict]:
    """The kernel fixtures of ``kind``: file, function and the call's arguments."""
    manifest = json.loads((ARTIFACTS / kind / "manifest.json").read_text())
    out = []
    for case in manifest["cases"]:
        if case.get("kind_of_case") != "kernel":
            continue
        call = case["calls"][0]
        out.append(
            {
                "file": str(ARTIFACTS / case["file"]),
                "function": case["function"],
                "npz": str(ARTIFACTS / call["npz"]),
                "args": call["args"],
            }
        )
    return out


def splice(case: dict, payload: bytes, kind: str, path: Path) -> dict:
    """A mutant of ``case``'s artifact whose ``kind`` payload is ``payload`` (of the same size),
    written to ``path``."""
    data = bytearray(Path(case["file"]).read_bytes())
    module = next(m for m in payloads.read_embedded_modules(bytes(data)) if m.kind == kind)
    if len(payload) != len(module.payload):
        raise ValueError(f"{path.name}: payload of {len(payload)} bytes for a slot of {len(module.payload)}")
    data[module.offset : module.offset + len(payload)] = payload
    path.write_bytes(data)
    return {**case, "path": str(path), "payload": payload}


def mutate(data: bytearray, start: int, size: int, rng: random.Random) -> list[tuple[int, int]]:
    """Changes 1-3 bytes of data[start:start+size]; returns (offset in payload, new byte)."""
    edits = []
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(size)
        old = data[start + at]
        new = old ^ (1 << rng.randrange(8)) if rng.random() < 0.5 else rng.randrange(256)
        data[start + at] = new
        edits.append((at, new))
    return edits


def make_mutants(kind: str, count: int, seed: int, work: Path) -> list[dict]:
    rng = random.Random(seed)
    cases = fixtures(kind)
    mutants = []
    for i in range(count):
        case = cases[i % len(cases)]
        data = bytearray(Path(case["file"]).read_bytes())
        module = next(m for m in payloads.read_embedded_modules(bytes(data)) if m.kind == kind)
        edits = mutate(data, module.offset, len(module.payload), rng)
        path = work / f"mutant_{i:04d}_{Path(case['file']).stem}.so"
        path.write_bytes(data)
        payload = bytes(data[module.offset : module.offset + len(module.payload)])
        mutants.append({**case, "path": str(path), "edits": edits, "payload": payload})
    return mutants


def _pump(stream, lines: queue.Queue) -> None:
    """Lines of ``stream`` into ``lines``, then "" at its end."""
    for line in stream:
        lines.put(line)
    lines.put("")


def run_mutants(kind: str, mutants: list[dict]) -> list[dict]:
    """Outcome of each mutant; a child that dies is replaced and resumes after its mutant."""
    results: list[dict | None] = [None] * len(mutants)
    nxt = 0
    while nxt < len(mutants):
        batch_file = Path(mutants[nxt]["path"]).with_suffix(".batch.json")
        batch = [{k: v for k, v in m.items() if k != "payload"} for m in mutants[nxt:]]
        batch_file.write_text(json.dumps(batch))
        argv = [sys.executable, "-c", CHILD, kind, str(DEVICE_TYPES[kind]), str(batch_file)]
        child = subprocess.Popen(
            [*argv, json.dumps(CLEAR_KINDS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="backslashreplace",  # a panic message may quote the payload's bytes
            cwd="/",
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_pump, args=(child.stdout, lines), daemon=True).start()
        current = None
        while True:
            try:
                line = lines.get(timeout=PER_MUTANT_TIMEOUT)
            except queue.Empty:
                child.kill()
                if current is not None:
                    results[nxt + current] = {"outcome": "hang"}
                break
            if not line:
                break
            msg = json.loads(line)
            if "start" in msg:
                current = msg["start"]
            else:
                results[nxt + msg.pop("done")] = msg
                current = None
        child.wait()
        stderr = child.stderr.read()
        if current is not None and results[nxt + current] is None:
            tail = [ln for ln in stderr.splitlines() if ln.strip()][-3:]
            results[nxt + current] = {"outcome": "crash", "returncode": child.returncode, "stderr": tail}
        done = [i for i, r in enumerate(results) if r is not None]
        nxt = (max(done) + 1) if done else len(mutants)
    return [r or {"outcome": "hang"} for r in results]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", default="webgpu", choices=sorted(DEVICE_TYPES))
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--save", type=Path, help="write the payloads of crashing/unreadable/hanging mutants here")
    args = p.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tvm-mutants-") as tmp:
        mutants = make_mutants(args.kind, args.count, args.seed, Path(tmp))
        results = run_mutants(args.kind, mutants)
    counts = Counter(r["outcome"] for r in results)
    bad = []
    for i, (m, r) in enumerate(zip(mutants, results)):
        if r["outcome"] in ("crash", "hang", "unreadable"):
            bad.append(i)
            print(f"mutant {i} ({Path(m['file']).name}, edits {m['edits']}): {r}", flush=True)
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                # <fixture>__<seed>_<index>.bin: tests/webgpu/test_webgpu_mutants.py splices it back
                name = f"{Path(m['file']).stem}__{args.seed}_{i}.bin"
                (args.save / name).write_bytes(m["payload"])
    kinds = Counter(r.get("kind") for r in results if r["outcome"] == "error")
    summary = {
        "kind": args.kind,
        "mutants": args.count,
        "seed": args.seed,
        "outcomes": dict(counts),
        "error_kinds": dict(kinds),
        "seconds": round(time.monotonic() - start, 1),
    }
    print(json.dumps(summary), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
