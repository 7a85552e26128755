"""Helpers for the CUDA backend tests: device/NVRTC availability (skip with the reason), the
fake CUDA driver, and a reader/writer of apache-tvm 0.27's ``cuda`` module payloads (on top of
backend_testing's artifact reader and payload writer).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from backend_testing.devices import device_or_skip  # noqa: F401
from backend_testing.payloads import (  # noqa: F401
    EmbeddedModule,
    FunctionTablePayload,
    Kernel,
    Reader,
    embedded_module,
    parse_function_table_payload,
    write_function_table_payload,
)
from fakes import fnv1a, parse_log  # noqa: F401

CUDA = 2
CUDA_HOST = 3
HERE = Path(__file__).resolve().parent


def cuda_device(tvm: Any, index: int = 0) -> Any:
    """tvm.cuda(index), or a skip with the driver's reason (a failure with TVM_TEST_REQUIRE_CUDA=1)."""
    return device_or_skip(tvm, tvm.cuda(index), CUDA, "CUDA", fallback_reason=f"no CUDA device {index}")


def nvrtc_or_skip(driver_major: int = 0) -> dict[str, Any]:
    """The NVRTC the runtime would use, or a skip naming what to install."""
    import tvm.backend.cuda as hook

    try:
        return hook.nvrtc_info(driver_major)
    except RuntimeError as err:
        if os.environ.get("TVM_TEST_REQUIRE_NVRTC") == "1":
            pytest.fail(f"TVM_TEST_REQUIRE_NVRTC=1 but NVRTC is unusable: {err}")
        pytest.skip(f'NVRTC not available (pip install "tvm-runtime-cuda[nvrtc]"): {err}')


def has_nvrtc() -> bool:
    """Whether an NVRTC the runtime can use is installed (tests that reach a compile step)."""
    import tvm.backend.cuda as hook

    try:
        hook.nvrtc_info()
        return True
    except RuntimeError:
        return False


# ---------------------------------------------------------------------------- payloads


def cuda_payload_of(so_path: str | os.PathLike) -> EmbeddedModule:
    return embedded_module(so_path, "cuda")


# ``str fmt; map<str, FunctionInfo> fmap; bytes code`` (apache-tvm 0.27), as every
# function-table module kind is laid out.
CudaPayload = FunctionTablePayload
parse_cuda_payload = parse_function_table_payload


def write_cuda_payload(kernels: list[Kernel], code: str | bytes, fmt: str = "cuda") -> bytes:
    """A ``cuda`` module payload as apache-tvm 0.27 writes it."""
    return write_function_table_payload(kernels, code, fmt)


def load_payload(payload: bytes) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("ffi.Module.load_from_bytes.cuda")(payload)


def dtype_str(t: tuple[int, int, int]) -> str:
    """DLDataType -> the string tvm-ffi prints for it."""
    code, bits, lanes = t
    base = {0: "int", 1: "uint", 2: "float", 3: "handle", 4: "bfloat", 6: "bool"}[code]
    name = "handle" if code == 3 and bits == 64 else f"{base}{bits}"
    return name if lanes == 1 else f"{name}x{lanes}"


def fake_ptx(kernel_names: list[str]) -> str:
    """Enough PTX text for the fake driver: one ``.entry`` per kernel (never run)."""
    entries = "".join(f".visible .entry {n}(\n)\n{{\n  ret;\n}}\n" for n in kernel_names)
    return f"//\n.version 8.0\n.target sm_80\n.address_size 64\n{entries}"
