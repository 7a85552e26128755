"""``tvm.backend.loader``: load a backend on demand, as apache-tvm 0.27's loader does.

``load(name)`` imports the hook ``tvm.backend.<name>`` (or whatever the ``tvm.backends`` entry
point ``<name>`` names) and calls its ``register_backend()`` once; for an apache-tvm style
plugin (an entry point naming a callable) it calls that callable once.  ``import tvm`` does
the same for every entry point unless ``TVM_DEVICE_BACKEND_AUTOLOAD=0`` or ``TVM_BACKENDS``
leaves it out; ``load`` ignores both, since asking for a backend by name is explicit.
"""

from __future__ import annotations

import importlib
import types
from typing import Any, Callable

import tvm_ffi

from ._target import SUPPORTED_DEVICE, device_kind_name, register_device_target_detector

# name -> the hook module or plugin callable that registered successfully.
_LOADED: dict[str, Any] = {}


def is_loaded(name: str) -> bool:
    """Whether backend ``name`` registered successfully (at ``import tvm`` or through ``load``)."""
    return name.lower() in _LOADED


def load(name: str) -> None:
    """Load backend ``name`` and register it; does nothing when it is already loaded.

    Raises ``ImportError`` naming the wheel to install when no such backend is installed, and
    whatever the backend's registration raised when it cannot load (the message says why).
    """
    key = name.lower()
    if key in _LOADED:
        return
    from . import _discovery

    record = _discovery.record_of(key)
    if record is not None and record.entry_point is not None:
        target = _load_entry_point(record.entry_point, record.distribution)
    else:
        target = _import_hook(name)
    try:
        if isinstance(target, types.ModuleType):
            register_hook(key, target)
        else:
            run_plugin(key, target)
    except Exception as err:
        if record is not None:
            _discovery.mark_failed(record, err)
        raise
    if record is not None:
        _discovery.mark_loaded(record, target)


def register_hook(name: str, module: types.ModuleType) -> None:
    """Run the registration of a hook module of our protocol once (hook API 1.0)."""
    if name in _LOADED:
        return
    register = getattr(module, "register_backend", None) or getattr(module, "register", None)
    if not callable(register):
        raise AttributeError(
            f"backend hook {module.__name__} has no register_backend() function (hook API 1.0)"
        )
    kinds = _kinds_of(module)
    before = {kind: SUPPORTED_DEVICE.get(kind) for kind in kinds}
    register()
    # A hook that defines detect_target() but registered no detector gets it registered for
    # the kinds it serves: the registry stays the only way targets are detected.
    detect = getattr(module, "detect_target", None)
    if callable(detect) and all(SUPPORTED_DEVICE.get(kind) is before[kind] for kind in kinds):
        for kind in kinds:
            register_device_target_detector(kind, detect)
    _LOADED[name] = module


def run_plugin(name: str, plugin: Callable[[], Any]) -> None:
    """Call an apache-tvm style plugin entry point (``"pkg:_autoload"``) once."""
    if name in _LOADED:
        return
    if not callable(plugin):
        raise TypeError(
            f"entry point {name!r} of group tvm.backends names {plugin!r}, which is neither a "
            "hook module nor a callable"
        )
    plugin()
    _LOADED[name] = plugin


def _kinds_of(module: types.ModuleType) -> list[str]:
    kinds = []
    for device_type in getattr(module, "DEVICE_TYPES", ()):
        try:
            kinds.append(device_kind_name(device_type))
        except ValueError:
            continue  # a type this tvm-ffi does not name has no detector key either
    return kinds


def _load_entry_point(ep: Any, distribution: str | None) -> Any:
    try:
        return ep.load()
    except ModuleNotFoundError as err:
        if not err.name or not (ep.module == err.name or ep.module.startswith(err.name + ".")):
            raise  # something the backend imports is missing: its own error says what
        dist = distribution or f"the distribution that declares entry point {ep.name!r}"
        raise ImportError(
            f"Cannot load TVM backend {ep.name!r}: its entry point names {ep.module}, which is "
            f"not installed (a broken install of {dist}). Reinstall it: "
            f"pip install --force-reinstall {distribution or ''}".rstrip(),
            name=ep.module,
        ) from err


def _import_hook(name: str) -> types.ModuleType:
    module_name = f"tvm.backend.{name}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name != module_name:
            raise
        raise ImportError(_not_installed(name), name=module_name) from err


def _release_train_backends() -> set[str]:
    """Backend names of this release train that serve a device (from the core's table)."""
    lookup = tvm_ffi.get_global_func("runtime.DistributionForDevice", allow_missing=True)
    if lookup is None:
        return set()
    prefix = "tvm-runtime-"
    names = set()
    for device_type in tvm_ffi.DLDeviceType:
        dist = str(lookup(int(device_type)))
        if dist.startswith(prefix):
            names.add(dist[len(prefix) :])
    return names


def _not_installed(name: str) -> str:
    dist = f"tvm-runtime-{name.lower()}"
    known = _release_train_backends()
    if name.lower() in known:
        return f"Cannot load TVM backend {name!r}: it is not installed. Install it: pip install {dist}"
    return (
        f"Cannot load TVM backend {name!r}: no module tvm.backend.{name} and no entry point "
        f"{name!r} in the tvm.backends group. tvm-runtime's backends are wheels named "
        f"tvm-runtime-<name> (e.g. {', '.join(sorted(known)) or 'opencl, vulkan, cuda'}): "
        f"pip install {dist} if it is one of them; a third-party backend comes from its own "
        "distribution. `python -m tvm.backend` lists what is installed."
    )


__all__ = ["is_loaded", "load"]
