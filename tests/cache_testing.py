"""The persistent kernel caches (OpenCL, Vulkan, CUDA) from the outside.

* the entry file format of tvm_runtime/backend/cache/cache_entry.h, decoded and encoded here with
  struct, hashlib and zlib only, so the tests check what the runtime writes against the documented
  layout and can craft entries that are damaged in one precise way;
* a fresh interpreter that runs real apache-tvm 0.27 artifacts and reports the backend's
  `tvm_runtime.<backend>.cache_info` counters.

Imported like ``conftest`` (tests/ is on sys.path); fuzz/seeds.py uses the encoder too.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"TVMRTCE\0"
VERSION = 1
# magic, version, description length, payload length, payload CRC-32, reserved, key digest (hex)
HEADER = struct.Struct("<8sIIQII64s")
assert HEADER.size == 96


@dataclass
class Entry:
    description: str
    payload: bytes
    digest: str

    @property
    def fields(self) -> dict[str, str]:
        """The key's `name=value` lines (repeated names: the last one)."""
        out = {}
        for line in self.description.splitlines():
            name, _, value = line.partition("=")
            out[name] = value.replace("\\n", "\n").replace("\\\\", "\\")
        return out


def parse_entry(data: bytes) -> Entry:
    """The entry in `data`; ValueError if the runtime would reject it on its own terms."""
    if len(data) < HEADER.size or data[:8] != MAGIC:
        raise ValueError("not an entry")
    magic, version, dlen, plen, crc, reserved, digest = HEADER.unpack_from(data)
    if version != VERSION or reserved != 0 or HEADER.size + dlen + plen != len(data):
        raise ValueError("bad framing")
    description = data[HEADER.size : HEADER.size + dlen]
    payload = data[HEADER.size + dlen :]
    if zlib.crc32(payload) != crc:
        raise ValueError("payload checksum mismatch")
    if hashlib.sha256(description).hexdigest().encode() != digest:
        raise ValueError("digest does not match the description")
    return Entry(description.decode(), payload, digest.decode())


def encode_entry(description: str, payload: bytes, digest: str | None = None) -> bytes:
    """An entry file; `digest` defaults to the description's own (the only valid one)."""
    raw = description.encode()
    digest = digest or hashlib.sha256(raw).hexdigest()
    header = HEADER.pack(MAGIC, VERSION, len(raw), len(payload), zlib.crc32(payload), 0, digest.encode())
    return header + raw + payload


def file_name(description: str) -> str:
    """Where the runtime looks for the entry of a key."""
    return hashlib.sha256(description.encode()).hexdigest()[:40] + ".entry"


def entries(directory: Path) -> dict[str, Entry]:
    """Every entry file of a cache directory, parsed (a damaged one raises)."""
    return {p.name: parse_entry(p.read_bytes()) for p in sorted(Path(directory).glob("*.entry"))}


def with_field(entry: Entry, name: str, value: str) -> str:
    """The entry's description with one field changed (what another driver or runtime wrote)."""
    lines = [
        f"{name}={value}" if line.startswith(f"{name}=") else line for line in entry.description.splitlines()
    ]
    assert lines != entry.description.splitlines(), f"no field {name!r}"
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------- running artifacts in a child

CHILD = r"""
import json, os, sys, numpy as np, tvm
sys.path.insert(0, {tests!r})
from conftest import ARTIFACTS, run_kernel_call
backend, names = {backend!r}, {names!r}
dev = {{"opencl": tvm.opencl, "vulkan": tvm.vulkan}}[backend](0)
info = tvm.get_global_func("tvm_runtime." + backend + ".cache_info")
cases = {{}}
for manifest in ("manifest.json", "vulkan/manifest.json"):
    for c in json.loads((ARTIFACTS / manifest).read_text())["cases"]:
        if c["target"] == backend and c["kind_of_case"] == "kernel":
            cases[c["name"]] = c
def listing():
    d = info()["dir"]
    return set(os.listdir(d)) if os.path.isdir(d) else set()
ok, made = {{}}, {{}}
for name in names:
    case, before, good = cases[name], listing(), True
    for call in case["calls"]:
        for _, out, expected in run_kernel_call(tvm, case, call, dev):
            good &= bool(np.allclose(out.numpy(), expected, rtol=case["rtol"], atol=case["atol"]))
    ok[name], made[name] = good, sorted(listing() - before)
cache = {{k: (v if isinstance(v, (bool, int)) else str(v)) for k, v in info().items()}}
print("RESULT " + json.dumps({{"ok": ok, "made": made, "cache": cache}}))
"""


def _child_code(backend: str, names: list[str]) -> str:
    from conftest import REPO

    return CHILD.format(tests=str(REPO / "tests"), backend=backend, names=list(names))


def _result(stdout: str) -> dict:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def run_kernels(backend: str, names: list[str], env: dict[str, str]) -> dict:
    """Runs the manifest kernel cases `names` on device 0 of `backend` in a fresh interpreter.

    Returns {"ok": {case: its outputs match numpy}, "made": {case: entry files that appeared
    while it ran}, "cache": that process's cache_info (counters included)}."""
    from conftest import run_python

    return _result(run_python(_child_code(backend, names), env=env).stdout)


def start_kernels(backend: str, names: list[str], env: dict[str, str]) -> subprocess.Popen:
    """run_kernels, started in the background (finish with `finish_kernels`)."""
    return subprocess.Popen(
        [sys.executable, "-c", _child_code(backend, names)],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )


def finish_kernels(proc: subprocess.Popen) -> dict:
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"child failed ({proc.returncode}):\n{stdout}\n{stderr}"
    return _result(stdout)


@dataclass
class WarmCache:
    """A cache directory one process filled by running kernel cases, and what that run reported."""

    directory: Path
    result: dict

    @classmethod
    def fill(cls, backend: str, names: list[str], directory: Path) -> WarmCache:
        env = {f"TVM_{backend.upper()}_CACHE_DIR": str(directory)}
        return cls(directory, run_kernels(backend, names, env))

    def entry(self, name: str) -> str:
        """The file name of the one entry case `name` made."""
        (made,) = self.result["made"][name]
        return made

    def copy(self, tmp_path: Path) -> Path:
        """A copy of the directory for one scenario to change."""
        directory = tmp_path / "cache"
        shutil.copytree(self.directory, directory)
        return directory
