"""Helpers for the ROCm backend tests: the device (or a skip with the reason), the fake HIP
runtime, the ROCm artifacts of tests/artifacts/rocm (generate_rocm.py) and their payloads, and
the decoding of the packed argument buffers the fake records.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from backend_testing.devices import device_or_skip  # noqa: F401
from backend_testing.payloads import FunctionTablePayload, embedded_module, parse_function_table_payload  # noqa: F401
from fakes import fnv1a, parse_log  # noqa: F401

from conftest import ARTIFACTS

ROCM = 10
ROCM_HOST = 11
HERE = Path(__file__).resolve().parent
ROCM_MANIFEST = json.loads((ARTIFACTS / "rocm" / "manifest.json").read_text())


def rocm_device(tvm: Any, index: int = 0) -> Any:
    """tvm.rocm(index), or a skip with the reason (a failure with TVM_TEST_REQUIRE_ROCM=1)."""
    return device_or_skip(tvm, tvm.rocm(index), ROCM, "ROCm", fallback_reason=f"no ROCm device {index}")


# The architectures the fixtures are built for (generate_rocm.py), as a fake HIP device reports
# them: gcnArchName, wavefront size, and EF_AMDGPU_MACH of their code objects.
ARCHS = {
    "gfx90a": {"gcn": "gfx90a:sramecc+:xnack-", "warp": 64, "mach": 0x3F},
    "gfx942": {"gcn": "gfx942:sramecc+:xnack-", "warp": 64, "mach": 0x4C},
    "gfx1100": {"gcn": "gfx1100", "warp": 32, "mach": 0x41},
}


def fake_arch_env(arch: str) -> dict[str, str]:
    """The fake HIP's settings for a device of `arch`."""
    return {"FAKE_HIP_ARCH": ARCHS[arch]["gcn"], "FAKE_HIP_WARP": str(ARCHS[arch]["warp"])}


def rocm_cases(kind: str = "kernel", arch: str = "gfx90a") -> list[dict[str, Any]]:
    """The ROCm artifacts built for `arch` (default gfx90a, the files without a suffix)."""
    return [c for c in ROCM_MANIFEST["cases"] if c["kind_of_case"] == kind and c["arch"] == arch]


def rocm_case(name: str) -> dict[str, Any]:
    (found,) = [c for c in ROCM_MANIFEST["cases"] if c["name"] == name]
    return found


def artifact(name: str) -> str:
    return str(ARTIFACTS / rocm_case(name)["file"])


def hip_payload_of(path: str | os.PathLike) -> FunctionTablePayload:
    """The ``hip`` module payload of an artifact (a Relax model's is under its VM executable)."""
    return parse_function_table_payload(embedded_module(path, "hip").payload)


# ---------------------------------------------------------------------------- argument buffers

# DLDataType (code, bits, lanes) -> struct format of the value in the packed buffer.
_ARG_FORMAT = {(3, 64, 1): "Q", (0, 32, 1): "i", (0, 64, 1): "q", (1, 32, 1): "I", (1, 64, 1): "Q"}
_ARG_FORMAT.update({(2, 32, 1): "f", (2, 64, 1): "d"})


def unpack_args(arg_types: list[tuple[int, int, int]], hex_buffer: str) -> list[Any]:
    """The values of a packed argument buffer: each at an offset aligned to its size, as
    apache-tvm 0.27 packs ROCm kernel arguments."""
    data = bytes.fromhex(hex_buffer)
    out, offset = [], 0
    for t in arg_types:
        f = _ARG_FORMAT[tuple(t)]
        size = struct.calcsize(f)
        offset = (offset + size - 1) // size * size
        (value,) = struct.unpack_from("<" + f, data, offset)
        out.append(value)
        offset += size
    if offset != len(data):
        raise AssertionError(f"buffer of {len(data)} bytes for arguments ending at {offset}")
    return out
