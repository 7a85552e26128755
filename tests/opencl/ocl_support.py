"""Helpers for the OpenCL backend tests: the OpenCL device fixture and the ``opencl`` payload
format of apache-tvm 0.27 (on top of backend_testing's artifact reader and payload writer),
used to take real payloads apart and to craft broken ones.
"""

from __future__ import annotations

from backend_testing.devices import device_or_skip
from backend_testing.payloads import EmbeddedModule, Kernel, embedded_module, write_function_table_payload

OPENCL = 4


def opencl_device(tvm):
    """tvm.opencl(0), or a skip with the driver's reason (a failure when OpenCL is required)."""
    return device_or_skip(tvm, tvm.opencl(0), OPENCL, "OpenCL")


def device_has_fp16(tvm, dev) -> bool:
    prop = tvm.get_global_func("runtime.GetDeviceTargetProperty")
    return bool(prop(dev, "supports_float16"))


# ------------------------------------------------------------------------ payload formats


def opencl_payload_of(so_path: str) -> EmbeddedModule:
    return embedded_module(so_path, "opencl")


def write_opencl_payload(kernels: list[Kernel], code: str, fmt: str = "cl") -> bytes:
    """An ``opencl`` module payload as apache-tvm 0.27 writes it (OpenCL C source by default)."""
    return write_function_table_payload(kernels, code, fmt)


def code_offset(payload: bytes) -> int:
    """Offset of the u64 length that precedes the OpenCL source in an ``opencl`` payload."""
    i = payload.index(b"// Function: ")
    return i - 8
