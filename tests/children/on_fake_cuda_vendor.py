"""The start of a child program running an external-codegen module (cublas_json, cudnn_json) on
the fake CUDA driver with a fake vendor library (tests/fakes/fake_{cublaslt,cudnn}.c): the tests
run their code after ``from children.on_fake_cuda_vendor import *``, in a fresh interpreter whose
TVM_CUDA_DRIVER_LIBRARY, FAKE_VENDOR_LIBRARY and FAKE_VENDOR_PREFIX name the fakes
(tests/byoc/cuda_fakes.py sets them), with tests/ and tests/byoc on its path.  It gives them the
runtime, the BYOC payload writers, the vendor fake's ``log()`` and ``live()``, ``dev``, tensor
helpers, ``module()`` and ``result(**kw)``."""

from __future__ import annotations

# What the programs use besides the names defined here, so that `import *` gives it to them.
import ctypes
import json  # noqa: F401
import os

import numpy as np
import tvm_ffi  # noqa: F401
from byoc_support import BYOC, EXPECTED, Graph, const_loader_payload, json_payload, load_from_bytes  # noqa: F401

import tvm
import tvm.backend.cuda as hook  # noqa: F401
from children.reporting import result, result_of_error  # noqa: F401

vendor = ctypes.CDLL(os.environ["FAKE_VENDOR_LIBRARY"])
vendor_log = getattr(vendor, os.environ["FAKE_VENDOR_PREFIX"] + "_log")
vendor_log.restype = ctypes.c_char_p
live = getattr(vendor, os.environ["FAKE_VENDOR_PREFIX"] + "_live_allocations")
live.restype = ctypes.c_long
dev = tvm.cuda(0)


def log() -> str:
    return vendor_log().decode()


def on_device(a):
    return tvm.runtime.tensor(np.ascontiguousarray(a), device=dev)


def raw_on_device(a, dtype):
    """A tensor of `dtype` (e.g. float8_e4m3fn, which numpy lacks) holding the bytes of `a`
    (copyfrom would need ml_dtypes to name the numpy type of float8)."""
    a = np.ascontiguousarray(a)
    t = tvm.runtime.empty(a.shape, dtype, dev)
    tvm.get_global_func("runtime.TVMTensorCopyFromBytes")(t, a.ctypes.data_as(ctypes.c_void_p), a.nbytes)
    return t


def module(kind, symbol, graph, heads):
    """A `kind` module of one function `symbol` computing `graph`'s `heads`, under a const_loader."""
    loader = load_from_bytes(tvm, "const_loader", const_loader_payload({}, {symbol: []}))
    loader.import_module(load_from_bytes(tvm, kind, json_payload(symbol, graph.to_json(heads), [])))
    return loader


def result_of_building(kind, graph, heads) -> None:
    """Build a ``kind`` module of ``graph`` and report the RuntimeError that raises (``error``, with
    the fake's ``log``), or ``error=None``."""
    try:
        module(kind, "sym", graph, heads).get_function("sym")
        result(error=None)
    except RuntimeError as err:
        result(error=str(err), log=log())
