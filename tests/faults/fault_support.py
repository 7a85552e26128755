"""What the fault-injection tests share: a fresh-interpreter probe that reports as JSON and the
check that the rest of the runtime still works after a fault (the fake libraries: tests/fakes).

A fault is injected in a fresh interpreter (vendor libraries are opened once per process), and
every probe ends with the same question: does a tensor allocated before the fault still hold
its values, and do the CPU and every other healthy backend still run a real artifact?
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from backend_testing.devices import device_or_skip

from conftest import ARTIFACTS, REPO, run_python

HERE = Path(__file__).resolve().parent
CUDA_TESTS = REPO / "tests" / "cuda"

# The `add` artifact (c = a + b, 1024 float32) of each device kind, built by apache-tvm 0.27
# (Vulkan: packed by tests/artifacts/vulkan/generate.py).
ADD_ARTIFACT = {
    "cpu": ARTIFACTS / "cpu" / "add.so",
    "opencl": ARTIFACTS / "opencl" / "add.so",
    "vulkan": ARTIFACTS / "vulkan" / "add.so",
    "cuda": ARTIFACTS / "cuda" / "add.so",
}

ADD_PATHS = {kind: str(path) for kind, path in ADD_ARTIFACT.items()}

PRELUDE = f"""
import json, sys, warnings
import numpy as np
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
with warnings.catch_warnings(record=True) as IMPORT_WARNINGS:
    warnings.simplefilter("always")
    import tvm
IMPORT_WARNINGS = [str(w.message) for w in IMPORT_WARNINGS]
ADD = {ADD_PATHS!r}
STATUS = tvm.get_global_func("runtime.DeviceDriverStatus")


def run_add(kind, index=0):
    '''The `add` artifact on tvm.<kind>(index); True when it matches numpy.'''
    dev = tvm.device(kind, index)
    rng = np.random.default_rng(index)
    a_np, b_np = rng.standard_normal((2, 1024)).astype("float32")
    mod = tvm.runtime.load_module(ADD[kind])
    a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
    c = tvm.runtime.empty((1024,), "float32", dev)
    mod["add"](a, b, c)
    return bool(np.array_equal(c.numpy(), a_np + b_np))


def error_of(fn):
    '''"<ExceptionType>: <message>" of what fn raised, or None.'''
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - the probe reports every kind
        return f"{{type(err).__name__}}: {{err}}"
    return None


def result(**kw):
    print("RESULT:" + json.dumps(kw))
"""


API_NAMES = {"cpu": "CPU", "opencl": "OpenCL", "vulkan": "Vulkan", "cuda": "CUDA"}


def device(kind: str) -> Any:
    """tvm.device(kind, 0), or a skip with the driver's reason (a failure where CI requires it)."""
    import tvm

    dev = tvm.device(kind, 0)
    return device_or_skip(tvm, dev, int(dev.dlpack_device_type()), API_NAMES[kind])


def probe(body: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run PRELUDE + body in a fresh interpreter; the dict its last ``result(...)`` printed."""
    proc = run_python(PRELUDE + textwrap.dedent(body), env=env, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    assert proc.returncode == 0 and lines, (
        f"probe failed ({proc.returncode}):\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )
    return json.loads(lines[-1][len("RESULT:") :])


def cuda_support() -> Any:
    """tests/cuda/cuda_support.py: the NVRTC helpers, reused as they are."""
    if str(CUDA_TESTS) not in sys.path:
        sys.path.insert(0, str(CUDA_TESTS))
    import cuda_support

    return cuda_support
