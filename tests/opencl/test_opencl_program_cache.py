"""The persistent OpenCL program-binary cache, on PoCL with the real apache-tvm 0.27 artifacts.

Every scenario runs fresh interpreters (what the cache is for: the next process), each with its
own cache directory, and reads the process's `tvm_runtime.opencl.cache_info` counters to tell a
hit from a rebuild.  One warm cache is made once per module and copied for each scenario.
"""

from __future__ import annotations

import hashlib
import os
import time

import pytest
from backend_testing.payloads import parse_function_table_payload
from cache_testing import (
    WarmCache,
    encode_entry,
    entries,
    file_name,
    finish_kernels,
    parse_entry,
    run_kernels,
    start_kernels,
    with_field,
)
from ocl_support import opencl_device, opencl_payload_of

import tvm
from conftest import ARTIFACTS, cases, run_python

# The single-kernel artifacts of the manifest that PoCL runs (add_fp16 needs cl_khr_fp16).
KERNELS = ["add", "matmul", "row_sum", "dyn_muladd", "multi_out", "tiny_add"]
# Each call of a case loads its artifact afresh (conftest.run_kernel_call): dyn_muladd's second
# call finds the program its first call stored.
LOADS = sum(len(c["calls"]) for c in cases("opencl") if c["name"] in KERNELS)


@pytest.fixture(scope="module")
def dev():
    return opencl_device(tvm)


@pytest.fixture(scope="module")
def warm(dev, tmp_path_factory) -> WarmCache:
    """A cache filled by one process running every kernel."""
    return WarmCache.fill("opencl", KERNELS, tmp_path_factory.mktemp("opencl-warm") / "cache")


def source_of(name: str) -> bytes:
    (case,) = [c for c in cases("opencl") if c["name"] == name]
    return parse_function_table_payload(opencl_payload_of(ARTIFACTS / case["file"]).payload).code


def test_first_process_compiles_and_stores_every_kernel(dev, warm):
    directory, result = warm.directory, warm.result
    assert all(result["ok"].values()), result["ok"]
    stats = result["cache"]
    assert (stats["misses"], stats["stored"], stats["rejected"]) == (len(KERNELS), len(KERNELS), 0)
    assert stats["hits"] == LOADS - len(KERNELS)
    assert stats["dir"] == str(directory) and stats["enabled"]
    found = entries(directory)  # parses each file against the documented layout
    assert set(found) == {warm.entry(k) for k in KERNELS}
    assert stats["entries"] == len(found) and stats["bytes"] == sum(
        p.stat().st_size for p in directory.iterdir()
    )
    for name in KERNELS:
        entry = found[warm.entry(name)]
        fields = entry.fields
        # Keyed by everything the binary depends on, named by the digest of that key.
        assert warm.entry(name) == file_name(entry.description)
        assert fields["kind"] == "opencl-program/1"
        assert fields["source.sha256"] == hashlib.sha256(source_of(name)).hexdigest()
        assert fields["runtime"] == tvm.__version__
        assert fields["device"] == dev.device_name
        assert fields["driver_version"] == dev.driver_version
        assert fields["platform"].startswith("Portable Computing Language")
        assert "PoCL" in fields["platform_version"] and fields["options"] == ""
        assert len(entry.payload) > 1000  # PoCL's program binary, work-group code included


def test_second_process_loads_every_kernel_from_the_cache(warm, tmp_path):
    directory = warm.copy(tmp_path)
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    result = run_kernels("opencl", KERNELS, {"TVM_OPENCL_CACHE_DIR": str(directory)})
    assert all(result["ok"].values()), result["ok"]
    stats = result["cache"]
    assert (stats["hits"], stats["misses"], stats["stored"], stats["rejected"]) == (LOADS, 0, 0, 0)
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before


def _truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _flip_payload_byte(data: bytes) -> bytes:
    i = len(data) - 100
    return data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1 :]


def _flip_header_byte(data: bytes) -> bytes:
    return data[:17] + bytes([data[17] ^ 0x80]) + data[18:]  # the payload length


def _append(data: bytes) -> bytes:
    return data + b"\0"


def _foreign(data: bytes) -> bytes:
    return (ARTIFACTS / "opencl" / "add.npz").read_bytes()


def _empty(data: bytes) -> bytes:
    return b""


DAMAGE = {
    "add": _truncate,
    "matmul": _flip_payload_byte,
    "row_sum": _flip_header_byte,
    "dyn_muladd": _append,
    "multi_out": _foreign,
    "tiny_add": _empty,
}


def test_damaged_entries_are_rebuilt_and_replaced(warm, tmp_path):
    directory = warm.copy(tmp_path)
    for name, damage in DAMAGE.items():
        path = directory / warm.entry(name)
        path.write_bytes(damage(path.read_bytes()))
    result = run_kernels("opencl", KERNELS, {"TVM_OPENCL_CACHE_DIR": str(directory)})
    assert all(result["ok"].values()), result["ok"]
    stats = result["cache"]
    assert (stats["rejected"], stats["stored"], stats["hits"]) == (
        len(DAMAGE),
        len(DAMAGE),
        LOADS - len(DAMAGE),
    )
    assert "rebuilt and replaced" in stats["last_problem"]
    # Every file is a sound entry again, equal in key to the original.
    original = entries(warm.directory)
    assert {n: e.description for n, e in entries(directory).items()} == {
        n: e.description for n, e in original.items()
    }


@pytest.mark.parametrize(
    "field, value",
    [("runtime", "0.0.1"), ("driver_version", "99.9-other-driver"), ("device", "another device")],
)
def test_entry_made_for_another_runtime_or_driver_is_not_used(warm, tmp_path, field, value):
    # A file whose recorded key differs in one input (a runtime upgrade, a driver update), even
    # with a self-consistent digest and checksum, is never handed to the driver.
    directory = warm.copy(tmp_path)
    path = directory / warm.entry("add")
    entry = parse_entry(path.read_bytes())
    path.write_bytes(encode_entry(with_field(entry, field, value), entry.payload))
    result = run_kernels("opencl", ["add"], {"TVM_OPENCL_CACHE_DIR": str(directory)})
    assert result["ok"] == {"add": True}
    assert (result["cache"]["rejected"], result["cache"]["stored"]) == (1, 1)
    assert parse_entry(path.read_bytes()).description == entry.description


def test_key_changes_with_driver_and_runtime(warm):
    # The other side: the name an entry is stored under is the digest of all those inputs.
    entry = parse_entry((warm.directory / warm.entry("add")).read_bytes())
    names = {file_name(with_field(entry, f, "x")) for f in ("runtime", "driver_version", "device", "options")}
    assert len(names) == 4 and warm.entry("add") not in names


def test_concurrent_processes_fill_one_cache(dev, tmp_path):
    directory = tmp_path / "cache"
    env = {"TVM_OPENCL_CACHE_DIR": str(directory)}
    # Each process runs the kernels in another order, so stores and evictions interleave.
    procs = [start_kernels("opencl", KERNELS[i:] + KERNELS[:i], env) for i in range(4)]
    results = [finish_kernels(p) for p in procs]
    assert all(all(r["ok"].values()) for r in results)
    found = entries(directory)
    assert len(found) == len(KERNELS)
    assert not [p for p in directory.iterdir() if ".tmp." in p.name]
    again = run_kernels("opencl", KERNELS, env)
    assert (again["cache"]["hits"], again["cache"]["misses"]) == (LOADS, 0)


def test_size_cap_evicts_least_recently_used(warm, tmp_path):
    directory = warm.copy(tmp_path)
    older = ["add", "matmul", "row_sum"]
    new = "tiny_add"
    (directory / warm.entry(new)).unlink()
    for age, name in enumerate(older):  # add oldest
        os.utime(directory / warm.entry(name), (1000 + age, 1000 + age))
    for name in set(KERNELS) - set(older) - {new}:
        (directory / warm.entry(name)).unlink()
    sizes = {k: (warm.directory / warm.entry(k)).stat().st_size for k in [*older, new]}
    # Room for the new entry and one more: matmul, refreshed by its hit, stays (the slack allows
    # for a rebuilt binary of a slightly different size, and is smaller than either victim).
    cap = sizes["matmul"] + sizes[new] + min(sizes["add"], sizes["row_sum"]) // 2
    result = run_kernels(
        "opencl",
        ["matmul", new],
        {"TVM_OPENCL_CACHE_DIR": str(directory), "TVM_OPENCL_CACHE_MAX_SIZE": str(cap)},
    )
    assert all(result["ok"].values())
    assert (result["cache"]["hits"], result["cache"]["stored"], result["cache"]["evicted"]) == (1, 1, 2)
    assert set(entries(directory)) == {warm.entry("matmul"), warm.entry(new)}
    assert sum(p.stat().st_size for p in directory.iterdir()) <= cap


def test_cache_that_cannot_be_written_never_fails_a_call(dev, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    result = run_kernels("opencl", ["add"], {"TVM_OPENCL_CACHE_DIR": str(blocker / "cache")})
    assert result["ok"] == {"add": True}
    assert result["cache"]["store_failures"] == 1 and "cannot create" in result["cache"]["last_problem"]


def test_disabled(dev, tmp_path):
    directory = tmp_path / "cache"
    env = {"TVM_OPENCL_CACHE_DIR": str(directory), "TVM_OPENCL_CACHE_DISABLE": "1"}
    result = run_kernels("opencl", ["add"], env)
    assert result["ok"] == {"add": True}
    assert not result["cache"]["enabled"] and result["cache"]["misses"] == 0
    assert not directory.exists()


def test_default_location_follows_xdg_cache_home(tmp_path):
    code = """
import json, tvm
print(json.dumps({k: str(v) for k, v in tvm.get_global_func("tvm_runtime.opencl.cache_info")().items()}))
"""
    env = {"TVM_OPENCL_CACHE_DIR": "", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    out = run_python(code, env=env).stdout
    assert f'"dir": "{tmp_path}/xdg/tvm-runtime/opencl"' in out
    out = run_python(code, env={**env, "XDG_CACHE_HOME": "", "HOME": str(tmp_path / "home")}).stdout
    assert f'"dir": "{tmp_path}/home/.cache/tvm-runtime/opencl"' in out
    assert '"max_bytes": "536870912"' in out


def test_report_shows_the_cache(tmp_path):
    directory = tmp_path / "cache"
    out = run_python(
        "from tvm.backend.__main__ import main; main([])", env={"TVM_OPENCL_CACHE_DIR": str(directory)}
    ).stdout
    assert f"kernel cache: {directory}  0 entries, 0.0 of 512 MiB (TVM_OPENCL_CACHE_DIR" in out


def test_eviction_sweeps_temporary_files_of_dead_writers(warm, tmp_path):
    directory = warm.copy(tmp_path)
    stale = directory / f"{warm.entry('add')}.tmp.99999.0"
    fresh = directory / f"{warm.entry('add')}.tmp.99998.0"
    stale.write_bytes(b"half an entry")
    fresh.write_bytes(b"being written")
    hour_ago = time.time() - 7200
    os.utime(stale, (hour_ago, hour_ago))
    (directory / warm.entry("add")).unlink()
    run_kernels("opencl", ["add"], {"TVM_OPENCL_CACHE_DIR": str(directory)})
    assert not stale.exists() and fresh.exists()
