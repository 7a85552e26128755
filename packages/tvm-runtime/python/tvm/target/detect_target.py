"""Detect the compiler target of a device (apache-tvm 0.27's ``tvm.target.detect_target``).

The registry lives in ``tvm.backend._target`` so that backends register their detectors at
``import tvm`` without importing ``tvm.target``; this module is its public name.
"""

from __future__ import annotations

from ..backend._target import (
    SUPPORTED_DEVICE,
    detect_target_from_device,
    register_device_target_detector,
)

# apache-tvm's older name for the same dict.
SUPPORT_DEVICE = SUPPORTED_DEVICE

__all__ = [
    "SUPPORTED_DEVICE",
    "SUPPORT_DEVICE",
    "detect_target_from_device",
    "register_device_target_detector",
]
