"""What a backend hook declares about itself (hook API 1.1), behind :mod:`tvm.backend.hook_api`.

A hook module builds one :class:`BackendDeclaration` with ``hook_api.declare_backend(...)`` and
binds it to the module-level name ``BACKEND``; the loader reads it and does the rest (loads the
DSO after the ABI check, runs ``after_load``, registers the target detector, reports failures).
Arguments are checked here, when the hook is imported, so a mistake is one clear error naming
the argument instead of a failure later in the loader.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable
from typing import Any, Callable, Union

import tvm_ffi

from .._platform import DSO_SUFFIX
from ._dso import LOADED
from ._hook import driver_status as _core_driver_status

DeviceTypeLike = Union[int, tvm_ffi.DLDeviceType]
Detector = Callable[[Any], Any]


def _device_types(argument: str, values: Iterable[DeviceTypeLike]) -> tuple[tvm_ffi.DLDeviceType, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{argument} must be a tuple of tvm_ffi.DLDeviceType members, got {values!r}")
    out = []
    for value in values:
        try:
            out.append(tvm_ffi.DLDeviceType(value))
        except (ValueError, TypeError) as err:
            raise ValueError(
                f"{argument}: {value!r} is not a device type; use tvm_ffi.DLDeviceType members "
                f"(hook_api.DeviceType.kDLOpenCL, ...)"
            ) from err
    return tuple(out)


def _optional_callable(argument: str, value: Any) -> Any:
    if value is not None and not callable(value):
        raise TypeError(f"{argument} must be callable or None, got {value!r}")
    return value


def _conventional_library(name: str) -> str:
    """``libtvm_runtime_<name>.so`` beside the hook ``tvm.backend.<name>`` (the naming convention
    of c_api.h, section 4e), for a declaration made while that hook is being imported."""
    hook = sys.modules.get(f"tvm.backend.{name}")
    hook_file = getattr(hook, "__file__", None)
    if not hook_file:
        raise ValueError(
            f"library: give the path of the backend DSO; the default, libtvm_runtime_{name}.so "
            f"beside the hook, is only for a declaration in the hook module tvm.backend.{name}"
        )
    return os.path.join(os.path.dirname(hook_file), f"libtvm_runtime_{name}{DSO_SUFFIX}")


class BackendDeclaration:
    """One backend as its hook declares it; build it with ``hook_api.declare_backend``."""

    __slots__ = (
        "_after_load",
        "_diagnostics",
        "_driver_status",
        "_load",
        "detect_target",
        "device_types",
        "host_device_types",
        "library",
        "name",
    )

    def __init__(
        self,
        name: str,
        *,
        library: str | os.PathLike[str] | None = None,
        device_types: Iterable[DeviceTypeLike] = (),
        host_device_types: Iterable[DeviceTypeLike] = (),
        detect_target: Detector | None = None,
        driver_status: Callable[[], str] | None = None,
        diagnostics: Callable[[], dict[str, Any]] | None = None,
        after_load: Callable[[], None] | None = None,
        load: Callable[[str], None],
    ) -> None:
        if not isinstance(name, str) or not name or name != name.lower():
            raise ValueError(
                f"a backend name is a non-empty lower-case string (its entry point's), got {name!r}"
            )
        if library is None:
            library = _conventional_library(name)
        if not isinstance(library, (str, os.PathLike)):
            raise TypeError(f"library must be the path of the backend DSO, got {library!r}")
        self.name = name
        self.library = os.fspath(library)
        self.device_types = _device_types("device_types", device_types)
        self.host_device_types = _device_types("host_device_types", host_device_types)
        self.detect_target = _optional_callable("detect_target", detect_target)
        if self.detect_target is not None and not self.device_types:
            raise ValueError("detect_target needs device_types: the device kinds it detects targets for")
        self._driver_status = _optional_callable("driver_status", driver_status)
        self._diagnostics = _optional_callable("diagnostics", diagnostics)
        self._after_load = _optional_callable("after_load", after_load)
        self._load = load

    @property
    def served_device_types(self) -> tuple[tvm_ffi.DLDeviceType, ...]:
        """Every device type the DSO registers: the devices, then their host-memory companions."""
        return self.device_types + self.host_device_types

    def register_backend(self) -> None:
        """Load the backend now through ``tvm.backend.loader.load`` (apache-tvm's name for it);
        does nothing when it is loaded already, raises the reason when it cannot load."""
        self._load(self.name)

    def library_handle(self) -> ctypes.CDLL:
        """The loaded DSO (``ctypes``), for a hook that calls C functions of its own; loads the
        backend first if needed."""
        self.register_backend()
        return LOADED[self.name].handle

    def driver_status(self) -> str:
        """Why the backend's device is unusable (what is missing and how to fix it), or "" when
        it works."""
        if self._driver_status is not None:
            return str(self._driver_status())
        return _core_driver_status(self.device_types[0]) if self.device_types else ""

    def diagnostics(self) -> dict[str, Any]:
        """What the backend reports about its driver beyond the status (``{}`` if nothing)."""
        return dict(self._diagnostics()) if self._diagnostics is not None else {}

    def after_load(self) -> None:
        """Called by the loader once the DSO registered, before the target detector is."""
        if self._after_load is not None:
            self._after_load()

    def __repr__(self) -> str:
        types = ", ".join(t.name for t in self.served_device_types)
        return f"BackendDeclaration({self.name!r}, library={self.library!r}, device_types=({types}))"
