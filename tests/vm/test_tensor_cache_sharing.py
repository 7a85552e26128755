"""Tensor cache weights resident once across processes (issue 37).

On the CPU, ``vm.builtin.tensor_cache.load`` maps each shard copy-on-write: a raw record at a
64-byte aligned offset becomes a tensor over the mapping (every process shares the page cache's
copy), misaligned raw records come from the weight store's realigned image
($TVM_WEIGHT_CACHE_DIR), narrowed (f32-to-bf16) records are widened into private memory.
Fixtures: tests/artifacts/tensor_cache (apache-tvm 0.27's dump_tensor_cache, generate_tensor_cache.py):
``tiny_llama/`` has every record aligned, the top-level cache has misaligned and narrowed ones.

Where a tensor's data lies, and whether it is anonymous memory, is read from /proc/self/smaps
in fresh interpreters (as test_weight_store.py does).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import mapping_probe
import numpy as np
import pytest

import tvm
from conftest import ARTIFACTS, run_python

CACHE = ARTIFACTS / "tensor_cache"
LLAMA = CACHE / "tiny_llama"
EXPECTED = json.loads((CACHE / "expected.json").read_text())

# Loads spec["dir"] on the CPU and reports, per record: where its data lies (mapped file, inode,
# that mapping's anonymous kB) and whether its bits equal spec["expected"]'s (0-d records are
# stored 1-d in the npz: compared flat); plus this process's anonymous growth over the load alone
# (before anything reads a weight).
CHILD = """
import json, numpy as np, tvm
spec = json.loads({spec!r})
g = lambda name: tvm.get_global_func("vm.builtin." + name)
RAW_BITS = {{"bfloat16": "uint16", "float8_e4m3fn": "uint8"}}

def anonymous_kb():
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("Anonymous:"):
            return int(line.split()[1])

def bits(t):
    dtype = str(t.dtype)
    return t._create_view(t.shape, RAW_BITS[dtype]).numpy() if dtype in RAW_BITS else t.numpy()

before = anonymous_kb()
g("tensor_cache.load")(spec["dir"], 1, 0)
grown_kb = anonymous_kb() - before
expected = np.load(spec["npz"])
tensors = {{name: g("tensor_cache.get")(name) for name in spec["expected"]}}
ok = {{name: bool(np.array_equal(bits(t).ravel(), expected[key].ravel())) for name, (key, t) in
      ((n, (spec["expected"][n], t)) for n, t in tensors.items())}}
maps = mappings()
report = {{"grown_kb": grown_kb, "ok": ok,
          "where": {{n: where(t.data_ptr(), maps) for n, t in tensors.items()}},
          "aligned": {{n: t.data_ptr() % 64 == 0 for n, t in tensors.items()}}}}
{extra}
print(json.dumps(report))
"""


def _llama_expected() -> tuple[str, dict[str, str]]:
    """tiny_llama's records by name -> their key in an npz of the decoder fixture's weights."""
    llm = ARTIFACTS / "llm"
    names = json.loads((llm / "tiny_llama.json").read_text())["param_names"]
    return str(llm / "tiny_llama.npz"), {name: f"param_{i}" for i, name in enumerate(names)}


def _load(directory: Path, npz: str, expected: dict[str, str], extra: str = "", **env: str) -> dict:
    spec = json.dumps({"dir": str(directory), "npz": npz, "expected": expected})
    proc = run_python(mapping_probe.SOURCE + CHILD.format(spec=spec, extra=extra), env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _shard_of(directory: Path) -> dict[str, Path]:
    index = json.loads((directory / "tensor-cache.json").read_text())
    return {r["name"]: directory / s["dataPath"] for s in index["records"] for r in s["records"]}


def _records(directory: Path) -> dict[str, dict]:
    index = json.loads((directory / "tensor-cache.json").read_text())
    return {r["name"]: r for s in index["records"] for r in s["records"]}


# Writes through a mapped weight, then loads the cache again in the same process.
WRITE_THEN_RELOAD = """
name = next(iter(spec["expected"]))
t = tensors[name]
t.copyfrom(np.zeros(t.shape, str(t.dtype)))
report["written_anonymous_kb"] = where(t.data_ptr(), mappings())["anonymous_kb"]
held = t
g("tensor_cache.clear")()
report["held_still_zero"] = bool((held.numpy() == 0).all())
g("tensor_cache.load")(spec["dir"], 1, 0)
again = g("tensor_cache.get")(name)
report["reload_ok"] = bool(np.array_equal(again.numpy(), expected[spec["expected"][name]]))
del t, held, tensors, again
g("tensor_cache.clear")()
import gc; gc.collect()
report["shards_mapped_after_clear"] = sum(
    m["file"].startswith(spec["dir"]) and m["file"].endswith(".bin") for m in mappings())
"""


def test_aligned_records_alias_one_page_cache_copy_in_every_process(tmp_path):
    npz, expected = _llama_expected()
    shards = _shard_of(LLAMA)
    weight_kb = sum(r["nbytes"] for r in _records(LLAMA).values()) // 1024
    reports = [_load(LLAMA, npz, expected) for _ in range(2)]
    for report in reports:
        assert all(report["ok"].values()), report["ok"]
        assert all(report["aligned"].values()), report["aligned"]
        for name, where in report["where"].items():
            # the tensor's data is the shard file itself, not a private copy
            assert where["file"] == str(shards[name]), (name, where)
            assert where["inode"] == shards[name].stat().st_ino, (name, where)
            assert where["anonymous_kb"] == 0, (name, where)
        # The load itself made next to no private memory (a private copy would be the weights).
        assert report["grown_kb"] < weight_kb / 4, (report["grown_kb"], weight_kb)


def test_a_write_stays_private_and_the_mapping_lives_while_a_tensor_does(tmp_path):
    npz, expected = _llama_expected()
    before = {p: p.read_bytes() for p in set(_shard_of(LLAMA).values())}
    report = _load(LLAMA, npz, expected, extra=WRITE_THEN_RELOAD)
    # copy-on-write: the written pages became this process's, the file is untouched
    assert report["written_anonymous_kb"] > 0
    assert all(p.read_bytes() == data for p, data in before.items())
    # a tensor taken before clear() keeps its (written) mapping; a new load maps the file afresh
    assert report["held_still_zero"] and report["reload_ok"], report
    # once no tensor holds them, the shards are unmapped
    assert report["shards_mapped_after_clear"] == 0, report


MISALIGNED = sorted(
    name
    for name, rec in _records(CACHE).items()
    if rec["byteOffset"] % 64 and rec["nbytes"] and not name.startswith("bf16enc.")
)
ALIGNED = sorted(
    name
    for name, rec in _records(CACHE).items()
    if rec["byteOffset"] % 64 == 0 and rec["nbytes"] and not name.startswith("bf16enc.")
)


def _in_a_file(where: dict | None) -> bool:
    """Whether the data lies in a mapped file (not the heap or anonymous memory)."""
    return bool(where) and where["file"].startswith("/")


def _fixture_expected() -> dict[str, str]:
    return {name: want["key"] for name, want in EXPECTED.items()}


def test_misaligned_records_come_from_the_weight_store(tmp_path):
    assert MISALIGNED and ALIGNED  # the fixture has both kinds
    store = tmp_path / "weights"
    env = {"TVM_WEIGHT_CACHE_DIR": str(store), "TVM_WEIGHT_CACHE_MIN_SIZE": "0"}
    npz = str(CACHE / "expected.npz")
    first, second = (_load(CACHE, npz, _fixture_expected(), **env) for _ in range(2))
    (entry,) = store.glob("*.entry")
    shards = _shard_of(CACHE)
    for report in (first, second):
        assert all(report["ok"].values()), report["ok"]
        assert all(report["aligned"][n] for n in MISALIGNED + ALIGNED), report["aligned"]
        for name in MISALIGNED:
            assert report["where"][name]["file"] == str(entry), (name, report["where"][name])
            assert report["where"][name]["inode"] == entry.stat().st_ino
        for name in ALIGNED:
            assert report["where"][name]["file"] == str(shards[name]), name
        for name in ("bf16enc.w1", "bf16enc.b1", "empty"):  # widened / empty: private
            assert not _in_a_file(report["where"][name]), (name, report["where"][name])
    assert second["where"]["int8"]["anonymous_kb"] == 0


@pytest.mark.parametrize(
    "env",
    [{"TVM_WEIGHT_CACHE_DISABLE": "1"}, {"TVM_TENSOR_CACHE_MMAP": "0"}],
    ids=["store-off", "mapping-off"],
)
def test_without_the_store_or_mapping_records_are_private_copies(tmp_path, env):
    npz = str(CACHE / "expected.npz")
    store = {"TVM_WEIGHT_CACHE_DIR": str(tmp_path), "TVM_WEIGHT_CACHE_MIN_SIZE": "0"}
    report = _load(CACHE, npz, _fixture_expected(), **store, **env)
    assert all(report["ok"].values()), report["ok"]
    assert all(report["aligned"][n] for n in MISALIGNED), report["aligned"]
    mapped = {n for n, w in report["where"].items() if _in_a_file(w)}
    assert not mapped & set(MISALIGNED), mapped
    assert (mapped == set(ALIGNED)) == ("TVM_TENSOR_CACHE_MMAP" not in env), mapped
    assert not list(tmp_path.glob("*.entry"))


def test_a_shard_replaced_on_disk_leaves_loaded_weights_alone(tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(LLAMA, cache)
    load = tvm.get_global_func("vm.builtin.tensor_cache.load")
    get = tvm.get_global_func("vm.builtin.tensor_cache.get")
    clear = tvm.get_global_func("vm.builtin.tensor_cache.clear")
    clear()
    try:
        load(str(cache), 1, 0)
        name, shard = next(iter(_shard_of(cache).items()))
        want = get(name).numpy()
        # what a fresh download or a converter does: a new file renamed over the old one
        fresh = tmp_path / "fresh.bin"
        fresh.write_bytes(b"\xff" * shard.stat().st_size)
        os.replace(fresh, shard)
        np.testing.assert_array_equal(get(name).numpy(), want)
        # a shard shorter than its records is still refused up front
        shard.write_bytes(b"\0" * 100)
        with pytest.raises(ValueError, match="has 100 bytes, tensor-cache.json says"):
            load(str(cache), 1, 0)
        np.testing.assert_array_equal(get(name).numpy(), want)
    finally:
        clear()
