"""Helpers for the Relax VM tests: devices, running manifest cases, and taking an exported
artifact apart (ELF dynamic symbol -> ``__tvm_ffi__library_bin`` -> executable payload) to make
broken copies of it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from backend_testing.payloads import read_embedded_modules

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


def executable_span(so_bytes: bytes) -> tuple[int, int]:
    """(file offset, length) of the relax.VMExecutable payload inside an exported .so."""
    executable = read_embedded_modules(so_bytes)[0]
    assert executable.kind == "relax.VMExecutable", executable.kind
    return executable.offset, len(executable.payload)


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
