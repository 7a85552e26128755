"""What every session class shares: the device shortcuts (``sess.cpu()``, ``sess.cuda(1)``,
...), reading what ``upload`` sends, and the answer to ``download_linked_module``, which no
tvm-runtime session can give."""

from __future__ import annotations

import os
from typing import Any

from ..error import RPCError


def upload_payload(data: str | os.PathLike | bytes | bytearray, target: str | None) -> tuple[str, bytes]:
    """(name in the session's directory, bytes) of an ``upload(data, target)`` call: ``data``
    is the bytes themselves (``target`` required) or a file (named ``target`` or its own name)."""
    if isinstance(data, (bytes, bytearray)):
        if not target:
            raise ValueError("target must be given when uploading bytes")
        return target, bytes(data)
    with open(data, "rb") as f:
        blob = f.read()
    return target or os.path.basename(os.fspath(data)), blob


class DeviceShortcuts:
    """apache-tvm 0.27's ``RPCSession`` device methods, on top of the class's ``device()``."""

    def device(self, dev_type: Any, dev_id: int = 0) -> Any:
        raise NotImplementedError

    def cpu(self, dev_id: int = 0) -> Any:
        return self.device(1, dev_id)

    def cuda(self, dev_id: int = 0) -> Any:
        return self.device(2, dev_id)

    def cl(self, dev_id: int = 0) -> Any:
        return self.device(4, dev_id)

    opencl = cl

    def vulkan(self, dev_id: int = 0) -> Any:
        return self.device(7, dev_id)

    def metal(self, dev_id: int = 0) -> Any:
        return self.device(8, dev_id)

    def rocm(self, dev_id: int = 0) -> Any:
        return self.device(10, dev_id)

    def ext_dev(self, dev_id: int = 0) -> Any:
        return self.device(12, dev_id)

    def webgpu(self, dev_id: int = 0) -> Any:
        return self.device(15, dev_id)

    def hexagon(self, dev_id: int = 0) -> Any:
        return self.device(16, dev_id)

    def download_linked_module(self, path: str) -> bytes:
        raise RPCError(
            f"download_linked_module({path!r}) asks the server to link an object file with a "
            "compiler toolchain, which tvm-runtime does not run: upload a shared library exported "
            "by apache-tvm (export_library) and use load_module instead"
        )
