"""The attributes and the copy matrix of every device backend (children/copy_matrix.py): what
every device reports, host -> device -> host in every dtype, device -> device, views at byte
offsets, empty and scalar tensors, and a device index that does not exist.  It runs on this
machine's device, or on the backend's fake (tests/fakes) where the machine has none and the fake
models copies faithfully (drivers.py)."""

from __future__ import annotations

import tvm_ffi
from backend_testing.devices import device_or_skip
from declared import Backend, each_backend
from drivers import DRIVERS

import tvm
from conftest import child_result, run_module

COPY_DTYPES = ("float32", "float16", "int8", "int64", "float64", "bool", "uint16")


@each_backend(lambda b: bool(b.device_types))
def test_attributes_and_copy_matrix(backend: Backend):
    driver = DRIVERS[backend.name]
    device_type = int(tvm_ffi.DLDeviceType[backend.device_types[0]])
    dev = tvm.device(device_type, 0)
    if driver.fake is not None and not dev.exist:
        env = driver.fake()
    else:
        device_or_skip(tvm, dev, device_type, driver.api)
        env = {}
    r = child_result(run_module("children.copy_matrix", backend.name, *COPY_DTYPES, env=env))
    attributes = r.pop("attributes")
    assert r == {"dtypes": list(COPY_DTYPES), "missing_index_refused": True}
    assert isinstance(attributes["device_name"], str) and attributes["device_name"], attributes
    assert attributes["max_threads_per_block"] >= 1 and attributes["warp_size"] >= 1, attributes
    assert attributes["max_shared_memory_per_block"] > 0, attributes
    dims = attributes["max_thread_dimensions"]
    assert len(dims) == 3 and all(d >= 1 for d in dims), attributes
