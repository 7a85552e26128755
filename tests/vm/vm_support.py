"""Helpers for the Relax VM tests: devices, running manifest cases, and taking an exported
artifact apart (ELF dynamic symbol -> ``__tvm_ffi__library_bin`` -> executable payload) to make
broken copies of it.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import ARTIFACTS, MANIFEST

VM_ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
MAGIC_V1 = 0xD225DE2F4214151D
MAGIC_V2 = 0xD225DE2F4214151E
TARGET_DEVICE_TYPE = {"cpu": 1, "cuda": 2, "opencl": 4}


def vm_cases(target: str) -> list[dict[str, Any]]:
    return [c for c in MANIFEST["cases"] if c["target"] == target and c["kind_of_case"] == "vm"]


def device_for(tvm: Any, target: str) -> Any:
    """The device of `target`, or a pytest skip saying why it is unavailable."""
    dev = {"cpu": tvm.cpu, "opencl": tvm.opencl, "cuda": tvm.cuda}[target](0)
    if target != "cpu" and not dev.exist:
        reason = ""
        status = tvm.get_global_func("runtime.DeviceDriverStatus", allow_missing=True)
        if status is not None:
            try:
                reason = f": {status(TARGET_DEVICE_TYPE[target])}"
            except Exception as err:  # noqa: BLE001 - only decorates the skip reason
                reason = f": {err}"
        if target == "opencl" and os.environ.get("TVM_TEST_REQUIRE_OPENCL") == "1":
            pytest.fail(f"TVM_TEST_REQUIRE_OPENCL=1 but tvm.opencl(0) does not exist{reason}")
        pytest.skip(f"tvm.{target}(0) does not exist{reason}")
    return dev


def run_case_call(tvm: Any, vm: Any, call: dict[str, Any], dev: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Run one manifest call through vm["main"]; (got, expected) per output."""
    data = np.load(ARTIFACTS / call["npz"])
    args = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
    result = vm["main"](*args)
    outputs = list(result) if len(call["outputs"]) > 1 else [result]
    assert len(outputs) == len(call["outputs"])
    return [(o.numpy(), data[key]) for o, key in zip(outputs, call["outputs"])]


# ------------------------------------------------------------------ artifact surgery


def _sections(data: bytes) -> list[tuple[int, int, int, int, int]]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        _, sh_type, _, addr, offset, size, link = struct.unpack_from("<IIQQQQI", data, shoff + i * shentsize)
        out.append((sh_type, addr, offset, size, link))
    return out


def find_symbol(data: bytes, name: bytes) -> tuple[int, int]:
    """(file offset, size) of the data of a dynamic symbol."""
    sections = _sections(data)
    for sh_type, _, offset, size, link in sections:
        if sh_type != 11:  # SHT_DYNSYM
            continue
        strtab = sections[link][2]
        for pos in range(offset, offset + size, 24):
            st_name, _, _, shndx, value, sym_size = struct.unpack_from("<IBBHQQ", data, pos)
            end = data.index(b"\0", strtab + st_name)
            if data[strtab + st_name : end] == name:
                _, addr, sec_off, _, _ = sections[shndx]
                return value - addr + sec_off, sym_size
    raise KeyError(name)


def executable_span(so_bytes: bytes) -> tuple[int, int]:
    """(file offset, length) of the relax.VMExecutable payload inside an exported .so."""
    off, _ = find_symbol(so_bytes, b"__tvm_ffi__library_bin")
    pos = off + 8

    def u64() -> int:
        nonlocal pos
        (v,) = struct.unpack_from("<Q", so_bytes, pos)
        pos += 8
        return v

    n_indptr = u64()
    pos += 8 * n_indptr
    n_child = u64()
    pos += 8 * n_child
    kind_len = u64()
    kind = so_bytes[pos : pos + kind_len]
    pos += kind_len
    assert kind == b"relax.VMExecutable", kind
    length = u64()
    return pos, length


def executable_payload(path: Path) -> bytes:
    """The serialized executable embedded in an exported Relax .so."""
    data = path.read_bytes()
    start, length = executable_span(data)
    return data[start : start + length]


def patched_copy(path: Path, dst: Path, old: bytes, new: bytes) -> Path:
    """Copy of `path` whose executable payload has its first `old` replaced by `new` (same size)."""
    assert len(old) == len(new)
    data = bytearray(path.read_bytes())
    start, length = executable_span(bytes(data))
    at = bytes(data[start : start + length]).find(old)
    assert at >= 0, f"{old!r} not found in the executable of {path.name}"
    data[start + at : start + at + len(old)] = new
    dst.write_bytes(bytes(data))
    return dst


def packed_str(s: bytes) -> bytes:
    """The serializer's encoding of a string: u64 length + bytes."""
    return struct.pack("<Q", len(s)) + s
