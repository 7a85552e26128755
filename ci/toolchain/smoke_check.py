"""The checks smoke_aarch64.py runs inside the emulated aarch64 Python (not a pytest file).

    python smoke_check.py ARTIFACT_DIR    # prints one line per check, exits 1 on the first failure

ARTIFACT_DIR holds cpu_add.so and opencl_add.so from make_aarch64_artifacts.py.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np

N = 1024


def _ok(what: str) -> None:
    print(f"ok   {what}", flush=True)


def _add_inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal(N).astype("float32"), rng.standard_normal(N).astype("float32")


def check_core(artifacts: Path) -> None:
    import tvm

    if platform.machine() != "aarch64":
        raise SystemExit(f"not running on aarch64 but {platform.machine()}")
    _ok(f"import tvm on {platform.machine()} (Python {platform.python_version()})")
    a, b = _add_inputs()
    mod = tvm.runtime.load_module(str(artifacts / "cpu_add.so"))
    out = tvm.runtime.empty((N,), "float32")
    mod["cpu_add"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), out)
    np.testing.assert_array_equal(out.numpy(), a + b)
    _ok("CPU artifact (aarch64 LLVM code) computes A + B")
    try:
        tvm.runtime.empty((1 << 60,), "int8")
    except RuntimeError as err:
        # An exception thrown inside the zig-built core must come back as a Python error.
        assert "allocation" in str(err), err
        _ok(f"C++ error inside the core reaches Python: {err}")
    else:
        raise SystemExit("allocating 2**60 bytes did not fail")


def check_opencl(artifacts: Path) -> None:
    import tvm

    dev = tvm.opencl(0)
    if not dev.exist:
        raise SystemExit("no OpenCL device: is PoCL in the aarch64 root?")
    _ok(f"OpenCL device: {dev.device_name}")
    a, b = _add_inputs()
    mod = tvm.runtime.load_module(str(artifacts / "opencl_add.so"))
    out = tvm.runtime.empty((N,), "float32", dev)
    mod["opencl_add"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), out)
    np.testing.assert_array_equal(out.numpy(), a + b)
    _ok("OpenCL artifact (aarch64 host code + OpenCL kernel on PoCL) computes A + B")


def main() -> int:
    artifacts = Path(sys.argv[1])
    check_core(artifacts)
    check_opencl(artifacts)
    print("SMOKE OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
