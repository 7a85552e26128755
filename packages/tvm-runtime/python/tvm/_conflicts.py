"""Detect another distribution's files mixed into our ``tvm`` package directory.

apache-tvm, mlc-ai and tlcpack also ship a top-level ``tvm`` package.  pip does not detect
overlapping files: installing one over the other silently overwrites shared files and leaves a
mixture.  ``import tvm`` checks for a few marker files of those distributions (cheap ``stat``
calls); ``python -m tvm.backend`` does the full check through package metadata.
"""

from __future__ import annotations

import os
import warnings

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))

# Files that only the compiler distributions ship inside tvm/.
_FOREIGN_MARKERS = (
    os.path.join("lib", "libtvm_compiler.so"),
    os.path.join("lib", "libtvm.so"),
    "libtvm.so",
    "libtvm.dylib",  # apache-tvm's macOS wheel
    # tvm-runtime ships tvm/relax/__init__.py itself (the VirtualMachine alias), so the marker
    # is a file only the compiler distributions have.
    os.path.join("relax", "transform", "__init__.py"),
    os.path.join("tirx", "__init__.py"),
    # tvm-runtime ships tvm/target/__init__.py and detect_target.py itself (target detection).
    os.path.join("target", "target.py"),
)

# Distributions known to ship a `tvm` import package.
FOREIGN_DISTRIBUTIONS = (
    "apache-tvm",
    "apache-tvm-cu113",
    "mlc-ai",
    "mlc-ai-nightly",
    "mlc-ai-nightly-cpu",
    "tlcpack",
    "tlcpack-nightly",
)

FIX_HINT = (
    "Use separate environments, or remove both and reinstall one: "
    "`pip uninstall -y apache-tvm tvm-runtime && pip install tvm-runtime` "
    "(or `pip install apache-tvm` for the compiler)."
)


def foreign_marker_files() -> list[str]:
    """Marker files of other `tvm` distributions present in this package directory."""
    return [m for m in _FOREIGN_MARKERS if os.path.exists(os.path.join(_PKG_DIR, m))]


def warn_if_mixed_install() -> None:
    markers = foreign_marker_files()
    if markers:
        warnings.warn(
            "tvm-runtime shares its `tvm` package directory with another distribution "
            f"(found {', '.join(markers)} in {_PKG_DIR}): one of them has overwritten the "
            f"other's files. {FIX_HINT} Run `python -m tvm.backend` for details.",
            RuntimeWarning,
            stacklevel=3,
        )
