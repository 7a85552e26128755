"""Every answer of the tvm-runtime-config locator, and proof that giving them started nothing:
``tvm`` is not imported and no tvm-runtime library is mapped afterwards.

    python -m children.config_without_runtime
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

from children.library_mapping import mapped


def main() -> dict:
    import tvm_runtime_config

    answers = {}
    for flag in tvm_runtime_config.ANSWERS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = tvm_runtime_config.main([flag])
        answers[flag] = (rc, out.getvalue().strip())
    return {
        "answers": answers,
        "tvm_imported": sorted(m for m in sys.modules if m == "tvm" or m.startswith("tvm.")),
        "mapped": mapped(["libtvm_runtime", "libtvm_ffi"]),
    }


if __name__ == "__main__":
    print("RESULT:" + json.dumps(main()))
