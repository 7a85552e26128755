"""The start of a child program on the fake HIP runtime (tests/fakes/fake_hip.c): the tests run
their code after ``from children.on_fake_hip import *``, in a fresh interpreter whose
TVM_ROCM_LIBRARY is the fake (the runtime is opened once per process), with tests/ and
tests/rocm on its path.  It gives them the runtime, the ROCm hook, the payload writers, the fake
(``fake``, ``log()``, ``clear()``), ``add_payload()`` and ``load()`` for hand-made payloads, and
``result(**kw)``, which prints the ``RESULT:`` line conftest.child_result reads."""

from __future__ import annotations

# What the programs use besides the names defined here, so that `import *` gives it to them.
import ctypes  # noqa: F401
import gc  # noqa: F401
import json  # noqa: F401
import os
import sys  # noqa: F401

import fakes
import numpy as np  # noqa: F401
import tvm_ffi
from backend_testing.payloads import HANDLE, Kernel, embedded_module, write_function_table_payload  # noqa: F401
from rocm_support import *  # noqa: F403
from rocm_support import artifact, hip_payload_of

import tvm  # noqa: F401
import tvm.backend.rocm as hook  # noqa: F401
from children.reporting import result, result_of_error  # noqa: F401
from conftest import run_kernel_call  # noqa: F401

fake = fakes.FakeHip(os.environ["TVM_ROCM_LIBRARY"])
log, clear = fake.log, fake.clear_log


def add_payload(kernels=None, code_patch=None) -> bytes:
    """The `add` artifact's hsaco payload, its code patched by ``code_patch`` and its function
    table replaced by ``kernels``."""
    code = bytearray(hip_payload_of(artifact("add")).code)
    if code_patch:
        code_patch(code)
    kernels = kernels or [Kernel("add_kernel", [HANDLE, HANDLE, HANDLE])]
    return write_function_table_payload(kernels, bytes(code), "hsaco")


def load(payload: bytes):
    return tvm_ffi.get_global_func("ffi.Module.load_from_bytes.hip")(payload)
