"""Tensor views (runtime.TVMTensorCreateView, Tensor._create_view) are made as apache-tvm 0.27
makes them: the view keeps its source's `data` pointer and carries the offset in `byte_offset`
(the source's plus the relative one).  The same script runs under apache-tvm 0.27 (the reference
venv of the RPC tests) and under ours; the DLTensor fields are read through DLPack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
from rpc_support import apache_python  # noqa: E402,F401  (the apache-tvm 0.27 venv fixture)

PROBE = r"""
import ctypes, json
import numpy as np
import tvm

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
get_pointer.restype = ctypes.c_void_p
get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

def fields(t):
    capsule = t.__dlpack__()  # a legacy "dltensor" capsule: DLManagedTensor starts with DLTensor
    dl = DLTensor.from_address(get_pointer(capsule, b"dltensor"))
    return dl.data, dl.byte_offset

base = tvm.runtime.tensor(np.arange(16, dtype="int32"))
view = base._create_view((2, 4), "int32", 16)
inner = view._create_view((3,), "int32", 8)  # a view of a view: the offsets add up
whole = base._create_view((4, 4), "int32", 0)
shared = tvm.get_global_func("runtime.TVMTensorIsStorageShared")
report = {}
for name, t in (("base", base), ("view", view), ("inner", inner), ("whole", whole)):
    data, byte_offset = fields(t)
    report[name] = {
        "data_minus_base": data - fields(base)[0],
        "byte_offset": byte_offset,
        "numpy": t.numpy().tolist(),
        "from_dlpack": np.from_dlpack(t).tolist(),
        "shares_storage_with_base": bool(shared(base, t)),
    }
inner.copyfrom(np.array([-1, -2, -3], dtype="int32"))
report["base_after_write"] = base.numpy().tolist()
print(json.dumps(report))
"""


def _probe(python: str) -> dict:
    proc = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def ours() -> dict:
    return _probe(sys.executable)


def test_view_keeps_the_data_pointer_and_sets_byte_offset(ours):
    assert ours["view"]["data_minus_base"] == 0 and ours["view"]["byte_offset"] == 16
    assert ours["inner"]["data_minus_base"] == 0 and ours["inner"]["byte_offset"] == 16 + 8
    assert ours["view"]["numpy"] == [[4, 5, 6, 7], [8, 9, 10, 11]]
    assert ours["inner"]["numpy"] == ours["inner"]["from_dlpack"] == [6, 7, 8]
    # "Storage shared" means the same bytes (first and last), not the same allocation.
    assert ours["whole"]["shares_storage_with_base"] and ours["whole"]["byte_offset"] == 0
    assert not any(ours[k]["shares_storage_with_base"] for k in ("view", "inner"))
    assert ours["base_after_write"][6:9] == [-1, -2, -3]


def test_views_match_apache_tvm(ours, apache_python):  # noqa: F811
    assert ours == _probe(apache_python)
