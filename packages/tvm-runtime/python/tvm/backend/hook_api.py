"""The public API for backend hook modules (``tvm.backend.<name>``), versioned.

A hook of our protocol is the module an entry point of the ``tvm.backends`` group names
(``<name> = "tvm.backend.<name>"``).  Hook API 1.0, what the core expects of it:

* ``register_backend()`` (or ``register()``, the older name): load the backend's DSO with
  :func:`load_backend_dso` and register a target detector with
  :func:`register_device_target_detector`; raise with the reason when it cannot.  Discovery
  calls it once at ``import tvm`` (``tvm.backend.loader.load(name)`` does on demand).
* ``DEVICE_TYPES``: the ``tvm_ffi.DLDeviceType`` members the backend serves, so a failure to
  load is reported on those devices ("the opencl backend failed to load: ...").
* optionally ``detect_target(dev)``: registered for every kind in ``DEVICE_TYPES`` when
  ``register_backend()`` registered no detector itself.

Hooks import only this module from the core; everything else in ``tvm.backend`` is private
and may change between releases.  A hook that needs a newer API checks ``HOOK_API_VERSION``
(same major, minor at least what it needs).
"""

from __future__ import annotations

from tvm_ffi import DLDeviceType

from ..runtime.device import DeviceAttrKind
from ._dso import BackendABIError, BackendLoadError, load_backend_dso
from ._hook import driver_status, require_device
from ._target import register_device_target_detector

# (major, minor): a new minor only adds; a new major may remove or change what is here.
HOOK_API_VERSION = (1, 0)

DeviceType = DLDeviceType

__all__ = [
    "HOOK_API_VERSION",
    "BackendABIError",
    "BackendLoadError",
    "DeviceAttrKind",
    "DeviceType",
    "driver_status",
    "load_backend_dso",
    "register_device_target_detector",
    "require_device",
]
