"""The weight store: misaligned CPU constants resident once across processes (issue 37).

apache-tvm 0.27 embeds constants wherever they land in the library, and CPU kernels need them
64-byte aligned, so each process used to copy them into anonymous memory.  The first load now
writes their realigned image once to a content-addressed entry ($TVM_WEIGHT_CACHE_DIR), and every
later load, in any process, maps that file: one page-cache copy for all.  Fixture:
tests/artifacts/constants/weights_cpu.so (generate_constants.py), whose weights lie misaligned in
the file; the store's minimum size is lowered to 0 so its 50 KB of weights use it.

Every check runs in fresh interpreters (the store is per process, and /proc/self/maps tells where
a tensor's data lies and whether it is anonymous memory).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import ARTIFACTS, run_module, run_python

CONSTANTS = ARTIFACTS / "constants"
MISALIGNED = CONSTANTS / "weights_cpu.so"
DATA = np.load(CONSTANTS / "weights.npz")

# Loads the model, runs it, and says where first_weight()'s data lies (the mapping's file, inode
# and anonymous kilobytes, from /proc/self/smaps) and what the store counted.
CHILD = """
import gc, json, os, sys, numpy as np, tvm, tvm_ffi
path, npz = {path!r}, {npz!r}
data = np.load(npz)
mod = tvm.runtime.load_module(path)
vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
y = vm["main"](tvm.runtime.tensor(data["x"])).numpy()
w = vm["first_weight"]()
ptr = np.from_dlpack(w).ctypes.data
where = None
for line in open("/proc/self/smaps"):
    fields = line.split()
    if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        current = {{"file": " ".join(fields[5:]), "inode": int(fields[4]), "perms": fields[1]}}
        inside = lo <= ptr < hi
    elif inside and fields[0] == "Anonymous:":
        where = dict(current, anonymous_kb=int(fields[1]))
        inside = False
stats = dict(mod["constant_stats"]())
{extra}
info = tvm_ffi.get_global_func("tvm_runtime.weights.cache_info")()
print(json.dumps({{
    "y_ok": bool((y == data["y"]).all()), "w1_ok": bool((w.numpy() == data["w1"]).all()),
    "aligned": ptr % 64 == 0, "where": where, "stats": stats,
    "cache": {{str(k): (v if isinstance(v, (int, bool)) else str(v)) for k, v in info.items()}},
}}))
"""


def _code(extra: str = "") -> str:
    return CHILD.format(path=str(MISALIGNED), npz=str(CONSTANTS / "weights.npz"), extra=extra)


def _env(store: Path, **more: str) -> dict[str, str]:
    return {"TVM_WEIGHT_CACHE_DIR": str(store), "TVM_WEIGHT_CACHE_MIN_SIZE": "0", **more}


def _load(store: Path, extra: str = "", **env: str) -> dict:
    proc = run_python(_code(extra), env=_env(store, **env))
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["stderr"] = proc.stderr
    return report


def _entries(store: Path) -> list[Path]:
    return sorted(store.glob("*.entry"))


def _check_right(report: dict) -> None:
    assert report["y_ok"] and report["w1_ok"] and report["aligned"], report


def test_first_load_writes_once_and_later_processes_map_it(tmp_path):
    store = tmp_path / "weights"
    first = _load(store)
    _check_right(first)
    stats = first["stats"]
    # Every constant of this artifact is misaligned in the file: all come from the store.
    assert stats["stored"] == stats["tensors"] == 4 and stats["copied"] == 0, stats
    assert stats["stored_bytes"] == sum(DATA[k].nbytes for k in ("w1", "b1", "w2", "b2"))
    assert (first["cache"]["misses"], first["cache"]["stored"]) == (1, 1), first["cache"]
    (entry,) = _entries(store)
    assert first["where"]["file"] == str(entry)

    second = _load(store)
    _check_right(second)
    assert (second["cache"]["hits"], second["cache"]["stored"]) == (1, 0), second["cache"]
    assert second["stats"]["stored"] == 4 and second["stats"]["copied"] == 0
    # The second process maps the very file the first wrote (same inode: one page-cache copy),
    # and the weights are no anonymous memory of its own.
    assert second["where"]["file"] == str(entry), second["where"]
    assert second["where"]["inode"] == entry.stat().st_ino
    assert second["where"]["anonymous_kb"] == 0, second["where"]
    assert _entries(store) == [entry] and not list(store.glob("*.tmp.*"))
    # The diagnostic command shows where the store is and what it holds.
    out = run_module("tvm.backend", env=_env(store)).stdout
    assert f"weight cache: {store}  1 entries" in out, out


@pytest.mark.parametrize(
    "env",
    [{"TVM_WEIGHT_CACHE_DISABLE": "1"}, {"TVM_WEIGHT_CACHE_MIN_SIZE": "1M"}],
    ids=["disabled", "below-min-size"],
)
def test_without_the_store_constants_are_copied_privately(tmp_path, env):
    store = tmp_path / "weights"
    report = _load(store, **env)
    _check_right(report)
    assert report["stats"]["copied"] == 4 and report["stats"]["stored"] == 0, report["stats"]
    assert report["where"]["file"] == "" or not report["where"]["file"].startswith(str(store))
    assert not store.exists() or not _entries(store)


def test_concurrent_first_loads_write_one_entry_that_all_map(tmp_path):
    store = tmp_path / "weights"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(_code())],
            env={**os.environ, **_env(store)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd="/",
        )
        for _ in range(6)
    ]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    (entry,) = _entries(store)
    assert not list(store.glob("*.tmp.*"))
    for r in reports:
        _check_right(r)
        assert r["stats"]["stored"] == 4, r["stats"]
        assert (r["where"]["file"], r["where"]["inode"]) == (str(entry), entry.stat().st_ino), r
    # The directory lock lets one process write; the others find its entry.
    assert sum(r["cache"]["stored"] for r in reports) == 1, [r["cache"] for r in reports]


def _truncate(entry: Path) -> None:
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])


def _garble_payload(entry: Path) -> None:
    raw = bytearray(entry.read_bytes())
    raw[-100] ^= 0x40  # inside b2, the last constant
    entry.write_bytes(bytes(raw))


def _garble_header(entry: Path) -> None:
    raw = bytearray(entry.read_bytes())
    raw[100] ^= 0x01  # inside the key's description
    entry.write_bytes(bytes(raw))


def _empty(entry: Path) -> None:
    entry.write_bytes(b"")


@pytest.mark.parametrize("damage", [_truncate, _garble_payload, _garble_header, _empty])
def test_a_damaged_entry_is_a_miss_and_is_rewritten(tmp_path, damage):
    store = tmp_path / "weights"
    _check_right(_load(store))
    (entry,) = _entries(store)
    good = hashlib.sha256(entry.read_bytes()).hexdigest()
    damage(entry)
    report = _load(store)
    _check_right(report)
    cache = report["cache"]
    assert (cache["rejected"], cache["stored"], cache["hits"]) == (1, 1, 0), cache
    assert str(entry) in cache["last_problem"]
    # Rewritten: the same bytes as the first time, and the next process hits.
    assert hashlib.sha256(entry.read_bytes()).hexdigest() == good
    again = _load(store)
    assert again["cache"]["hits"] == 1 and again["cache"]["rejected"] == 0


# Deletes the entry (as eviction or `rm -rf ~/.cache` would) and puts garbage under its name
# while this process holds tensors on it, then checks they still read right.
LIFETIME = """
import glob
store = os.environ["TVM_WEIGHT_CACHE_DIR"]
(entry,) = glob.glob(store + "/*.entry")
os.remove(entry)
with open(entry, "wb") as f:
    f.write(b"\\0" * 4096)
del mod
gc.collect()
y = vm["main"](tvm.runtime.tensor(data["x"])).numpy()
maps = [l for l in open("/proc/self/maps") if entry in l]
assert maps and all("(deleted)" in l for l in maps), maps
"""


def test_an_entry_removed_while_held_stays_valid_for_its_tensors(tmp_path):
    store = tmp_path / "weights"
    _check_right(_load(store))
    report = _load(store, extra=LIFETIME)
    _check_right(report)
    assert report["cache"]["hits"] == 1


def test_an_unwritable_store_falls_back_to_private_copies(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    report = _load(blocker / "weights")
    _check_right(report)
    assert report["stats"]["copied"] == 4 and report["stats"]["stored"] == 0, report["stats"]
    assert report["cache"]["store_failures"] == 1, report["cache"]
    assert "a-file" in report["cache"]["last_problem"]
    # Said once on stderr, so a server's operator learns why its workers share nothing.
    assert report["stderr"].count("tvm-runtime: weight cache:") == 1, report["stderr"]


def test_an_image_over_the_size_bound_is_not_stored(tmp_path):
    store = tmp_path / "weights"
    report = _load(store, TVM_WEIGHT_CACHE_MAX_SIZE="16K")
    _check_right(report)
    assert report["stats"]["copied"] == 4, report["stats"]
    assert "TVM_WEIGHT_CACHE_MAX_SIZE" in report["cache"]["last_problem"]
    assert not store.exists() or not _entries(store)


WRITE = """
view = np.from_dlpack(w)
view[:] = 7.0
assert float(vm["first_weight"]().numpy()[0, 0]) == 7.0
"""


def test_writes_to_a_stored_constant_stay_in_the_process(tmp_path):
    store = tmp_path / "weights"
    _check_right(_load(store))
    (entry,) = _entries(store)
    digest = hashlib.sha256(entry.read_bytes()).hexdigest()
    _load(store, extra=WRITE)  # copy-on-write: the VM sees the write, the file does not
    assert hashlib.sha256(entry.read_bytes()).hexdigest() == digest
    report = _load(store)
    _check_right(report)
    assert report["cache"]["hits"] == 1
