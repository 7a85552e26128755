"""The messages between a Disco controller and its workers, and how values cross the channel.

Every transport (thread queues, process pipes, TCP sockets) carries the same tuples.  Tensors
never cross as tvm objects: they travel as numpy arrays (zero-copy between threads, pickled
between processes) and become tvm Tensors again on the other side.

controller -> worker (no reply):
    ("alloc", reg, shape, dtype, device, active)     tensor in register `reg` (None if not active)
    ("get_func", reg, name)                          global function `name`
    ("call", out_reg, func_reg, args)                out = func(*args); Reg(n) = a register
    ("module_func", out_reg, mod_reg, name)          out = module[name]
    ("load_vm", reg, path, device)                   a VirtualMachine over load_module(path)
    ("copy_in", reg, array)                          copy a numpy array into the register's tensor
    ("import", module_name)
    ("free", reg)
    ("deliver", reg, array)                          collective result: copy into reg's tensor
controller -> worker (one reply each, in order):
    ("sync",)          -> ("ok", None)
    ("fetch", reg)     -> ("ok", encoded value)
    ("contribute", reg)-> ("ok", numpy array of reg's tensor)    collective input
    ("shutdown",)      -> ("ok", None), then the worker exits
worker -> controller: ("ok", payload) or ("error", "<worker's error as text>").  A worker whose
command failed skips every later command and answers the next request with the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np


@dataclass(frozen=True)
class Reg:
    """A register reference inside call arguments."""

    reg_id: int


@dataclass(frozen=True)
class DeviceSpec:
    """A device as (DLPack device type, index): picklable, unlike tvm's Device on every version."""

    device_type: int
    index: int

    @staticmethod
    def of(device: Any) -> Optional[DeviceSpec]:
        if device is None:
            return None
        return DeviceSpec(int(device.dlpack_device_type()), int(device.index))


@dataclass(frozen=True)
class TensorValue:
    """A worker's tensor as it crosses the channel."""

    array: np.ndarray


def encode_value(value: Any) -> Any:
    """What a worker sends back for a register (tensors as numpy, plain values as they are)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "numpy") and hasattr(value, "shape") and hasattr(value, "dtype"):
        return TensorValue(np.ascontiguousarray(value.numpy()))
    if isinstance(value, (list, tuple)) or type(value).__name__ in ("Array", "List"):
        return [encode_value(v) for v in value]
    return repr(value)
