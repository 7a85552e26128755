"""What of a C++ error's backtrace reaches Python (tvm-ffi turns it into traceback entries)."""

from __future__ import annotations

import traceback


def cxx_frames(exc: BaseException) -> list[tuple[str, str]]:
    """(file name, function) of the traceback entries that come from C++ sources."""
    frames = traceback.extract_tb(exc.__traceback__)
    return [(f.filename.rsplit("/", 1)[-1], f.name) for f in frames if f.filename.endswith((".cc", ".h"))]
