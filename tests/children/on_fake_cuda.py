"""The start of a child program on the fake CUDA driver (tests/fakes/fake_cuda.c): the tests run
their code after ``from children.on_fake_cuda import *``, in a fresh interpreter whose
TVM_CUDA_DRIVER_LIBRARY is the fake (the driver is opened once per process), with tests/ and
tests/cuda on its path.  It gives them the runtime, the CUDA hook, the payload writers, the fake
(``fake``, ``log()``, ``clear()``, ``expect_params()``) and ``result(**kw)``, which prints the
``RESULT:`` line conftest.child_result reads."""

from __future__ import annotations

# What the programs use besides the names defined here, so that `import *` gives it to them.
import ctypes  # noqa: F401
import gc  # noqa: F401
import json  # noqa: F401
import os
import sys  # noqa: F401
import threading  # noqa: F401

import fakes
import numpy as np  # noqa: F401
import tvm_ffi  # noqa: F401
from backend_testing.payloads import FLOAT32, FLOAT64, HANDLE, INT32, INT64, UINT32, Kernel  # noqa: F401
from cuda_support import *  # noqa: F403

import tvm  # noqa: F401
import tvm.backend.cuda as hook  # noqa: F401
from children.reporting import result, result_of_error  # noqa: F401

fake = fakes.FakeCuda(os.environ["TVM_CUDA_DRIVER_LIBRARY"])
log, clear, expect_params = fake.log, fake.clear_log, fake.expect_params
