"""``tvm.rpc.LocalSession``: the session API served by this process itself.

apache-tvm 0.27 offers it so that code written against an ``RPCSession`` (upload, load_module,
get_function, devices) runs unchanged without a server.  Files go to a temporary directory that
lives as long as the session; functions, devices and tensors are this process's own.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import tvm_ffi

from .. import runtime
from ._devices import DeviceShortcuts, upload_payload
from ._workspace import Workspace


class LocalSession(DeviceShortcuts):
    """An in-process stand-in for an ``RPCSession``."""

    def __init__(self) -> None:
        self._workspace = Workspace()
        self._cleanup = weakref.finalize(self, self._workspace.remove)

    def __enter__(self) -> LocalSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Remove the session's files (also done when the session is garbage-collected)."""
        self._cleanup()

    def get_function(self, name: str) -> Any:
        return tvm_ffi.get_global_func(name)

    def upload(self, data: str | os.PathLike | bytes | bytearray, target: str | None = None) -> None:
        self._workspace.upload(*upload_payload(data, target))

    def download(self, path: str) -> bytes:
        return self._workspace.download(path)

    def remove(self, path: str) -> None:
        self._workspace.remove_file(path)

    def listdir(self, path: str = ".") -> list[str]:
        return [name for name in self._workspace.listdir(path).split(",") if name]

    def load_module(self, path: str) -> runtime.Module:
        return self._workspace.load_module(path)

    def device(self, dev_type: Any, dev_id: int = 0) -> runtime.Device:
        return runtime.device(dev_type, dev_id)

    def system_lib(self) -> runtime.Module:
        return runtime.system_lib()
