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
except ImportError as err:  # the wheel is missing, or its hook failed to import
    raise ImportError(
        "tvm.runtime.disco needs the tvm-runtime-extra wheel, which ships Disco: "
        'pip install "tvm-runtime[extra]" (see `python -m tvm.backend`); '
        f"importing tvm.backend.extra.disco failed with: {err}"
    ) from err

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
