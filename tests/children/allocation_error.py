"""The error a first allocation on a device raises, printed, in a fresh interpreter (warnings
silenced): how a backend that failed to load explains itself at the point of use.

    python -m children.allocation_error <device> [<backend whose status must be 'failed'>]
"""

from __future__ import annotations

import sys
import warnings

warnings.simplefilter("ignore")

import tvm  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) > 2:
        assert tvm.backend.list_backends()[sys.argv[2]].status == "failed"
    try:
        tvm.runtime.empty((2,), "float32", getattr(tvm, sys.argv[1])(0))
    except RuntimeError as e:
        print(e)
