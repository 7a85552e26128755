"""Why ``tvm.runtime.disco`` cannot be imported, in words that say what is really wrong."""

from __future__ import annotations

import importlib.util


def disco_import_error(err: ImportError) -> ImportError:
    """The error for a failed ``from tvm.backend.extra.disco import ...``: the wheel is not
    installed, the installed version lacks a name (older than this core), or it failed to load."""
    try:
        installed = importlib.util.find_spec("tvm.backend.extra") is not None
    except ImportError:
        installed = False
    if not installed:
        return ImportError(
            "tvm.runtime.disco needs the tvm-runtime-extra wheel, which ships Disco and is not "
            'installed: pip install "tvm-runtime[extra]"'
        )
    if "cannot import name" in str(err):
        return ImportError(
            f"the installed tvm-runtime-extra is older than this tvm-runtime ({err}): upgrade it, "
            'pip install -U "tvm-runtime[extra]" (`python -m tvm.backend` shows the versions)'
        )
    return ImportError(
        f"tvm-runtime-extra is installed but its Disco module failed to import: {err} "
        "(`python -m tvm.backend` shows why)"
    )
