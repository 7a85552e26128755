"""The attributes and the copy matrix of one device backend: device 0's attributes, host ->
device -> host for each dtype, device -> device, views at byte offsets, empty and scalar tensors,
and a device index that does not exist.

    python -m children.copy_matrix <backend> <dtype>...

Runs on whatever driver the environment points the backend at (the real one, or a fake of
tests/fakes); prints the attributes and what it checked.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from backend_testing.runners import (
    check_copies_honour_byte_offsets,
    check_device_to_device_copy,
    check_host_round_trip,
)

import tvm


def main(backend: str, dtypes: list[str]) -> dict:
    dev = tvm.device(backend, 0)
    assert dev.exist, tvm.get_global_func("runtime.DeviceDriverStatus")(int(dev.dlpack_device_type()))
    for dtype in dtypes:
        check_host_round_trip(tvm, dev, dtype)
    check_device_to_device_copy(tvm, dev)
    check_copies_honour_byte_offsets(tvm, dev)
    assert tvm.runtime.empty((0,), "float32", dev).numpy().shape == (0,)
    scalar = tvm.runtime.tensor(np.array(3.5, dtype="float32"), dev)
    assert scalar.numpy() == np.float32(3.5)
    missing = tvm.device(backend, 63)
    assert missing.exist is False and missing.device_name is None
    try:
        tvm.runtime.empty((4,), "float32", missing)
        refused = ""
    except ValueError as err:
        refused = str(err)
    attributes = {
        name: getattr(dev, name)
        for name in ("device_name", "max_threads_per_block", "warp_size", "max_shared_memory_per_block")
    }
    attributes["max_thread_dimensions"] = list(dev.max_thread_dimensions)
    return {"dtypes": dtypes, "missing_index_refused": "does not exist" in refused, "attributes": attributes}


if __name__ == "__main__":
    print("RESULT:" + json.dumps(main(sys.argv[1], sys.argv[2:])))
