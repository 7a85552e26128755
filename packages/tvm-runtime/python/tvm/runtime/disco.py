"""``tvm.runtime.disco``: apache-tvm 0.27's import path for Disco, TVM's multi-worker runtime.

Disco ships in the ``tvm-runtime-extra`` wheel (``tvm.backend.extra.disco``); this module is the
name deploy scripts written for apache-tvm use, so ``from tvm.runtime.disco import
ThreadedSession`` works unchanged when that wheel is installed, and says which wheel to install
when it is not.
"""

from __future__ import annotations

try:
    from tvm.backend.extra.disco import (
        DiscoError,
        DModule,
        DPackedFunc,
        DRef,
        ProcessSession,
        Session,
        SocketSession,
        ThreadedSession,
    )
except ImportError as err:  # the wheel is missing, too old, or its hook failed to import
    from ._extra_hint import disco_import_error

    raise disco_import_error(err) from err

__all__ = [
    "DModule",
    "DPackedFunc",
    "DRef",
    "DiscoError",
    "ProcessSession",
    "Session",
    "SocketSession",
    "ThreadedSession",
]
