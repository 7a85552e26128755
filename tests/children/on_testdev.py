"""Checks of the test-only ``testdev`` backend (examples/backend_template), installed with
``pip --target`` in a directory the test puts on PYTHONPATH:

    python -m children.on_testdev probe       # RESULT: import warnings, backend statuses, device
    python -m children.on_testdev device      # copies, views, streams, target detection
    python -m children.on_testdev workspace   # TVMBackendAllocWorkspace on the backend's device
    python -m children.on_testdev barrier     # the thread pool's barrier (TVM_NUM_THREADS=4)

Each check asserts and prints ``ok``.
"""

from __future__ import annotations

import ctypes
import json
import sys
import warnings

import numpy as np


def probe() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import tvm
    records = {n: r.status for n, r in tvm.backend.list_backends().items()}
    warned = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    print("RESULT:" + json.dumps({"warnings": warned, "status": records, "exist": tvm.ext_dev(0).exist}))


def device() -> None:
    import tvm

    dev = tvm.ext_dev(0)
    assert dev.device_name == "testdev0" and dev.max_thread_dimensions == [64, 1, 1]
    assert tvm.ext_dev(1).exist and not tvm.ext_dev(2).exist
    a = np.arange(100, dtype="float32")
    t = tvm.runtime.tensor(a, dev)  # alloc + host->device
    u = t.copyto(tvm.ext_dev(1))  # device->device
    np.testing.assert_array_equal(u.numpy(), a)  # device->host
    v = t._create_view((10,), "float32", 40)
    np.testing.assert_array_equal(v.numpy(), a[10:20])
    s = dev.create_raw_stream()
    assert s != 0
    dev.set_raw_stream(s)
    dev.sync(s)
    dev.free_raw_stream(s)
    assert tvm.backend.detect_target_from_device(dev) == {"kind": "testdev", "max_num_threads": 64}
    assert tvm.get_global_func("runtime.GetDeviceTargetProperty")(dev, "supports_float16") is True


def workspace() -> None:
    import tvm  # noqa: F401  (loads the core and the backend)

    lib = ctypes.CDLL(None)
    alloc = lib.TVMBackendAllocWorkspace
    alloc.restype = ctypes.c_void_p
    alloc.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.c_int, ctypes.c_int]
    free = lib.TVMBackendFreeWorkspace
    free.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    p1, p2 = alloc(12, 0, 1000, 2, 32), alloc(12, 0, 5000, 2, 32)
    assert p1 and p2 and p1 % 64 == 0 and p2 % 64 == 0
    assert free(12, 0, p2) == 0 and free(12, 0, p1) == 0
    p3 = alloc(12, 0, 900, 2, 32)
    assert p3 == p1, "a freed block of the right size is reused"
    assert free(12, 0, p3) == 0
    assert free(12, 0, 12345) != 0, "freeing a foreign pointer is an error, not a crash"
    assert not alloc(12, 7, 10, 2, 32), "a bad device id fails cleanly"


def barrier() -> None:
    import tvm  # noqa: F401
    from tvm.backend.testdev import barrier_check

    assert barrier_check(0, 300) == 0
    assert barrier_check(2, 300) == 0
    assert barrier_check(1, 10) == 0


if __name__ == "__main__":
    check = {"probe": probe, "device": device, "workspace": workspace, "barrier": barrier}[sys.argv[1]]
    check()
    if check is not probe:
        print("ok")
