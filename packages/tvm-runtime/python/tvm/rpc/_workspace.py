"""The per-session working directory and the ``tvm.rpc.server.*`` functions that act on it."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

logger = logging.getLogger("tvm.rpc.server")


class Workspace:
    """A fresh temporary directory for one session; uploaded files live (and die) there."""

    def __init__(self, root: str | None = None, max_upload_bytes: int | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="tvm-rpc-", dir=root))
        self.max_upload_bytes = max_upload_bytes
        self.uploaded_bytes = 0

    @classmethod
    def attach(cls, path: str, max_upload_bytes: int | None = None) -> Workspace:
        """The workspace at ``path`` (made by the listener; the session process serves it)."""
        workspace = cls.__new__(cls)
        workspace.path = Path(path)
        workspace.max_upload_bytes = max_upload_bytes
        workspace.uploaded_bytes = 0
        return workspace

    def resolve(self, name: str) -> Path:
        """``name`` inside the workspace; names that would escape it are refused."""
        target = (self.path / str(name)).resolve()
        if target != self.path.resolve() and self.path.resolve() not in target.parents:
            raise ValueError(f"path {name!r} is outside the RPC session's working directory")
        return target

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    # ---- the server-side functions a client reaches through GetGlobalFunc ----

    def functions(self) -> dict[str, Callable[..., Any]]:
        return {
            "tvm.rpc.server.workpath": lambda name: str(self.resolve(name)),
            "tvm.rpc.server.upload": self.upload,
            "tvm.rpc.server.download": self.download,
            "tvm.rpc.server.remove": self.remove_file,
            "tvm.rpc.server.listdir": self.listdir,
            "tvm.rpc.server.load_module": self.load_module,
            "tvm.rpc.server.ModuleGetFunction": _module_get_function,
            "tvm.rpc.server.ImportModule": _import_module,
        }

    def upload(self, name: str, data: bytes) -> None:
        target = self.resolve(name)
        total = self.uploaded_bytes + len(data)
        if self.max_upload_bytes is not None and total > self.max_upload_bytes:
            raise PermissionError(
                f"upload of {name!r} ({len(data)} bytes) would bring this session's uploads to "
                f"{total} bytes, over the server's limit of {self.max_upload_bytes} (--max-upload-bytes)"
            )
        self.uploaded_bytes = total
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes(data))
        logger.info("upload %s (%d bytes)", target.name, len(data))

    def download(self, name: str) -> bytes:
        return self.resolve(name).read_bytes()

    def remove_file(self, name: str) -> None:
        target = self.resolve(name)
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()

    def listdir(self, name: str) -> str:
        target = self.resolve(name)
        return ",".join(sorted(os.listdir(target)))

    def load_module(self, name: str) -> Any:
        from tvm.runtime import load_module

        target = self.resolve(name)
        if not target.exists():
            raise FileNotFoundError(
                f"{name!r} is not in the RPC session's working directory; upload it first"
            )
        mod = load_module(str(target))
        logger.info("load_module %s", target.name)
        return mod


def _module_get_function(mod: Any, name: str, query_imports: bool) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("ffi.ModuleGetFunction")(mod, name, bool(query_imports))


def _import_module(parent: Any, child: Any) -> None:
    import tvm_ffi

    tvm_ffi.get_global_func("ffi.ModuleImportModule")(parent, child)
