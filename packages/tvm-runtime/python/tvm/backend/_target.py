"""The registry of device target detectors behind ``tvm.target.detect_target``.

A detector turns a device into the target config a user passes to the TVM compiler
(``tvm.target.Target(cfg)``).  The CPU's is built in; every backend registers its own through
``register_device_target_detector`` (ours from ``register_backend()``, third-party plugins
from their entry point), as with apache-tvm 0.27.

It lives in ``tvm.backend`` rather than ``tvm.target`` so that loading backends at
``import tvm`` never imports ``tvm.target``: in an environment where apache-tvm's files were
installed over ours, that package is the compiler's, and importing it would fail or pull in the
compiler.  ``tvm.target.detect_target`` re-exports this module's functions.
"""

from __future__ import annotations

import platform
from typing import Any, Callable, Union

import tvm_ffi

from ._hook import require_device

Detector = Callable[[Any], Any]
DeviceKind = Union[str, int, tvm_ffi.DLDeviceType]

_DLCPU = tvm_ffi.DLDeviceType.kDLCPU


def _detect_cpu(dev: Any) -> dict[str, Any]:
    del dev  # every CPU "device" of this process is the host
    machine = platform.machine()
    triple = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}.get(
        machine, f"{machine}-linux-gnu"
    )
    from ..runtime import num_threads

    return {"kind": "llvm", "mtriple": triple, "num-cores": num_threads()}


# Device kind name (``Device._DEVICE_TYPE_TO_NAME``: "cpu", "opencl", "ext_dev", ...) ->
# detector.  apache-tvm exposes the same dict as ``SUPPORTED_DEVICE``; code that writes to it
# directly keeps working.
SUPPORTED_DEVICE: dict[str, Detector] = {"cpu": _detect_cpu}


def _names() -> dict[int, str]:
    table = tvm_ffi.core.Device._DEVICE_TYPE_TO_NAME  # type: ignore[attr-defined]  # not in tvm-ffi's stubs
    return {int(t): n for t, n in table.items()}


def device_kind_name(kind: DeviceKind) -> str:
    """The registry key of ``kind``: a kind name ("opencl") or a device type (4, kDLOpenCL)."""
    names = _names()
    if isinstance(kind, str):
        if kind in names.values():
            return kind
        raise ValueError(f"unknown device kind {kind!r}; known kinds: {', '.join(sorted(names.values()))}")
    if isinstance(kind, int) and int(kind) in names:
        return names[int(kind)]
    raise ValueError(
        f"unknown device type {kind!r}: expected a kind name such as 'opencl' or a tvm_ffi.DLDeviceType"
    )


def register_device_target_detector(device_type: DeviceKind, detector: Detector) -> None:
    """Register ``detector(dev) -> target config`` for a device kind (last one wins).

    ``device_type`` is the kind name apache-tvm uses ("opencl", "vulkan", "cuda", ...); a
    ``tvm_ffi.DLDeviceType`` (or its number) is accepted as well.
    """
    if not callable(detector):
        raise TypeError(f"the target detector for {device_type!r} must be callable, got {detector!r}")
    SUPPORTED_DEVICE[device_kind_name(device_type)] = detector


def _no_detector(dev: Any, kind: str) -> ValueError:
    from ..runtime import _ffi_api

    dist = str(_ffi_api.DistributionForDevice(dev.dlpack_device_type()))
    if dist:
        why = (
            f"its backend {dist} is not installed or failed to load: pip install {dist} "
            "(`python -m tvm.backend` shows its status)"
        )
    else:
        why = "no installed backend serves it"
    return ValueError(
        f"cannot detect the target of {dev}: no target detector for device kind `{kind}`; {why}. "
        f"Detectors are registered for: {', '.join(sorted(SUPPORTED_DEVICE))}"
    )


def detect_target_from_device(dev: Any) -> Any:
    """The target config for ``dev`` (a ``Device`` or a string such as ``"opencl:0"``).

    Without the compiler there is no ``Target`` class, so this returns the config as a dict
    (``{"kind": "opencl", ...}``) that ``tvm.target.Target(cfg)`` accepts.  Raises ``ValueError``
    saying why when no backend serves the device kind or the device does not exist.
    """
    if isinstance(dev, str):
        from ..runtime import device

        dev = device(dev)
    device_type = dev.dlpack_device_type()
    kind = _names().get(int(device_type), str(device_type))
    detector = SUPPORTED_DEVICE.get(kind)
    if detector is None:
        raise _no_detector(dev, kind)
    if device_type != _DLCPU:
        require_device(dev)
    target = detector(dev)
    return dict(target) if isinstance(target, dict) else target


__all__ = [
    "SUPPORTED_DEVICE",
    "detect_target_from_device",
    "device_kind_name",
    "register_device_target_detector",
]
