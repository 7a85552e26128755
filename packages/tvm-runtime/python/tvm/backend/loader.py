"""``tvm.backend.loader``: activates backends and owns their status (apache-tvm 0.27's API).

``load(name)`` activates the backend of entry point ``name`` (or, without one, the hook module
``tvm.backend.<name>``) once; ``import tvm`` does the same for every entry point
(:func:`load_backends`) unless ``TVM_DEVICE_BACKEND_AUTOLOAD=0`` or ``TVM_BACKENDS`` leaves it
out; ``load`` ignores both, since asking for a backend by name is explicit.

Activating a hook of ours means reading what it declares (``BACKEND``, built with
``tvm.backend.hook_api.declare_backend``) and doing the rest here: load the DSO after the core's
ABI check, run its ``after_load``, register its target detector.  Hooks written for hook API
1.0 (``register_backend()``/``register()``, ``DEVICE_TYPES``, ``detect_target``) still work,
with a ``DeprecationWarning`` saying what to change.  A plugin of apache-tvm's protocol (an entry
point naming a callable) is called once.  Status lives only in the records of
:mod:`tvm.backend._registry`, and only this module writes it.
"""

from __future__ import annotations

import importlib
import os
import threading
import types
import warnings
from typing import Any

import tvm_ffi

from .. import _core
from . import _discovery, _dso, _registry
from ._declaration import BackendDeclaration
from ._registry import BackendRecord, is_loaded
from ._target import SUPPORTED_DEVICE, device_kind_name, register_device_target_detector

_FALSY = {"0", "false", "no", "off"}
# Activation runs once per backend even when threads ask for it at the same moment; re-entrant
# because a plugin or a 1.0 hook may itself call load().
_LOCK = threading.RLock()


def load(name: str) -> None:
    """Load backend ``name`` and register it; does nothing when it is already loaded.

    Raises ``ImportError`` naming the wheel to install when no such backend is installed, and
    whatever the backend's registration raised when it cannot load (the message says why).
    """
    key = name.lower()
    with _LOCK:
        record = _registry.record_of(key)
        if record is not None and record.status == "loaded":
            return
        if record is None:
            # No entry point names it (discovery ran at `import tvm`): the hook module itself.
            module = _import_hook(name)
            record = _registry.add(BackendRecord(name=key, module=module.__name__, hook=module))
        try:
            _activate(record)
        except Exception as err:
            _mark_failed(record, err)
            raise


def load_backends(force: bool = False) -> dict[str, BackendRecord]:
    """Discover (and, unless disabled, load) every backend; safe to call more than once.

    Entry points that name a hook module (our protocol) register first, then the ones that name
    a callable (apache-tvm's protocol: ``tvm_foo = "tvm_foo:_autoload"``) are called, so a
    plugin sees every backend of ours.  ``force=True`` loads even when autoload is disabled by
    the environment; the ``TVM_BACKENDS`` allow-list applies to both protocols.
    """
    autoload = force or _autoload_enabled()
    allow = _allow_list()
    with _LOCK:
        _discovery.discover()
        waiting = [r for r in _registry.records() if r.status in ("pending", "disabled", "not-allowed")]
        # Hooks first, plugins after; discovery's (sys.path) order within each.
        waiting.sort(key=lambda r: r.protocol == "callable")
        for record in waiting:
            if not autoload:
                _set_status(record, "disabled", "TVM_DEVICE_BACKEND_AUTOLOAD=0")
            elif allow is not None and record.name not in allow:
                _set_status(record, "not-allowed", f"not in TVM_BACKENDS={os.environ.get('TVM_BACKENDS')}")
            else:
                try:
                    _activate(record)
                # A broken backend must never break `import tvm`, not even one that calls sys.exit().
                except (Exception, SystemExit) as err:  # noqa: BLE001
                    _mark_failed(record, err)
                    _warn_failure(record)
        return _registry.list_backends()


def _discover_at_import() -> None:
    load_backends()


def _autoload_enabled() -> bool:
    return os.environ.get("TVM_DEVICE_BACKEND_AUTOLOAD", "1").strip().lower() not in _FALSY


def _allow_list() -> set[str] | None:
    raw = os.environ.get("TVM_BACKENDS")
    if raw is None or not raw.strip():
        return None
    return {n.strip().lower() for n in raw.split(",") if n.strip()}


# ---- activation -------------------------------------------------------------------------------


def _activate(record: BackendRecord) -> None:
    """Import what the entry point names and register it by its protocol; raises on failure."""
    target = record.hook if record.hook is not None else _resolve(record)
    record.hook = target
    if not isinstance(target, types.ModuleType):
        _run_plugin(record, target)
    else:
        declaration = getattr(target, "BACKEND", None)
        if declaration is not None:
            _activate_declared(record, target, declaration)
        else:
            _activate_hook_1_0(record, target)
    _set_status(record, "loaded")


def _resolve(record: BackendRecord) -> Any:
    """The hook module or plugin callable the record's entry point names."""
    ep = record.entry_point
    if ep is None:
        return _import_hook(record.name)
    try:
        return ep.load()
    except ModuleNotFoundError as err:
        if not err.name or not (ep.module == err.name or ep.module.startswith(err.name + ".")):
            raise  # something the backend imports is missing: its own error says what
        dist = record.distribution or f"the distribution that declares entry point {ep.name!r}"
        raise ModuleNotFoundError(
            f"Cannot load TVM backend {ep.name!r}: its entry point names {ep.module}, which is "
            f"not installed (a broken install of {dist}). Reinstall it: "
            f"pip install --force-reinstall {record.distribution or ''}".rstrip(),
            name=ep.module,
        ) from err


def _activate_declared(record: BackendRecord, module: types.ModuleType, declaration: Any) -> None:
    """Hook API 1.1: the hook declared itself; load its DSO and register its detector."""
    if not isinstance(declaration, BackendDeclaration):
        raise TypeError(
            f"{module.__name__}.BACKEND must be built by tvm.backend.hook_api.declare_backend(...), "
            f"got {declaration!r}"
        )
    if declaration.name != record.name:
        raise ValueError(
            f"entry point {record.name!r} names {module.__name__}, which declares backend "
            f"{declaration.name!r}: the two names must be the same"
        )
    record.hook_api = "1.1"
    record.declaration = declaration
    record.device_types = declaration.served_device_types
    record.library = declaration.library
    _dso.load_backend_dso(record.name, declaration.library)
    _note_library(record)
    declaration.after_load()
    if declaration.detect_target is not None:
        for device_type in declaration.device_types:
            register_device_target_detector(device_type, declaration.detect_target)


def _activate_hook_1_0(record: BackendRecord, module: types.ModuleType) -> None:
    """Hook API 1.0 (deprecated): the hook registers itself with register_backend()/register()."""
    used = [n for n in ("register_backend", "register") if callable(getattr(module, n, None))]
    if not used:
        raise AttributeError(
            f"backend hook {module.__name__} declares nothing: define "
            "BACKEND = tvm.backend.hook_api.declare_backend(...) (hook API 1.1)"
        )
    record.hook_api = "1.0"
    record.device_types = tuple(tvm_ffi.DLDeviceType(t) for t in getattr(module, "DEVICE_TYPES", ()))
    record.deprecation = _deprecation_message(record, module, used[0])
    warnings.warn_explicit(
        record.deprecation,
        DeprecationWarning,
        filename=getattr(module, "__file__", None) or module.__name__,
        lineno=1,
        module=module.__name__,
    )
    kinds = _kinds_of(record.device_types)
    before = {kind: SUPPORTED_DEVICE.get(kind) for kind in kinds}
    getattr(module, used[0])()
    detect = getattr(module, "detect_target", None)
    if callable(detect) and all(SUPPORTED_DEVICE.get(kind) is before[kind] for kind in kinds):
        for kind in kinds:
            register_device_target_detector(kind, detect)
    _note_library(record)


def _deprecation_message(record: BackendRecord, module: types.ModuleType, register: str) -> str:
    had = [f"{register}()"]
    had += [name for name in ("DEVICE_TYPES", "detect_target") if hasattr(module, name)]
    detector = ", detect_target=detect_target" if hasattr(module, "detect_target") else ""
    return (
        f"tvm backend hook {module.__name__} is written for hook API 1.0 ({', '.join(had)}), "
        "deprecated since hook API 1.1 and removed in 2.0. Declare the backend instead and let the "
        "loader load it: replace them with BACKEND = hook_api.declare_backend("
        f"{record.name!r}, device_types=DEVICE_TYPES{detector}), adding library=<path of the DSO> "
        f"unless it is libtvm_runtime_{record.name}.so beside the hook (see tvm.backend.hook_api)."
    )


def _kinds_of(device_types: tuple[tvm_ffi.DLDeviceType, ...]) -> list[str]:
    kinds = []
    for device_type in device_types:
        try:
            kinds.append(device_kind_name(device_type))
        except ValueError:
            continue  # a type this tvm-ffi does not name has no detector key either
    return kinds


def _note_library(record: BackendRecord) -> None:
    loaded = _dso.LOADED.get(record.name)
    if loaded is not None:
        record.library, record.abi_version = loaded.path, loaded.abi_version


def _run_plugin(record: BackendRecord, plugin: Any) -> None:
    """Call an apache-tvm style plugin entry point (``"pkg:_autoload"``) once."""
    if not callable(plugin):
        raise TypeError(
            f"entry point {record.name!r} of group tvm.backends names {plugin!r}, which is neither "
            "a hook module nor a callable"
        )
    plugin()


# ---- status and failures ----------------------------------------------------------------------


def _set_status(record: BackendRecord, status: str, reason: str | None = None) -> None:
    record.status, record.reason, record.fix = status, reason, None


def _mark_failed(record: BackendRecord, err: BaseException) -> None:
    _set_status(record, "failed", f"{type(err).__name__}: {err}")
    record.fix = _failure_fix(record, err)
    if record.protocol == "hook":
        _note_failure_on_devices(record)


def _failure_fix(record: BackendRecord, err: BaseException) -> str:
    if record.protocol == "callable":
        # A third-party plugin: we cannot know its fix, only how to get past it.
        dist = record.distribution or "the distribution that declares it"
        return (
            f"update or reinstall {dist}, or leave it out with TVM_BACKENDS (a comma-separated "
            "allow-list of backend names)"
        )
    dist = record.distribution or f"tvm-runtime-{record.name}"
    if isinstance(err, _dso.BackendABIError):
        # The meta-package pins a release train whose wheels were tested together.
        return (
            f'pip install "tvm[{record.name}]=={_core.VERSION}"'
            f"  (or upgrade both: pip install -U tvm-runtime {dist})"
        )
    pin = f"=={record.version}" if record.version else ""
    return f"pip install --force-reinstall --no-deps {dist}{pin}"


def _warn_failure(record: BackendRecord) -> None:
    who = f"{record.distribution or 'unknown distribution'} {record.version or ''}".strip()
    if record.protocol == "callable":
        what = f"tvm backend plugin '{record.name}' (entry point {record.name} = {record.module}, {who})"
    else:
        what = f"tvm backend '{record.name}' ({who})"
    warnings.warn(f"{what} failed to load: {record.reason}. Fix: {record.fix}", RuntimeWarning, stacklevel=4)


def _note_failure_on_devices(record: BackendRecord) -> None:
    # Later errors ("no backend for device opencl") then explain why instead of "install it".
    try:
        from ..runtime import _ffi_api

        for device_type in record.device_types or _device_types_of_distribution(record):
            _ffi_api.NoteBackendFailure(int(device_type), f"{record.reason}; fix: {record.fix}")
    except Exception:  # noqa: BLE001 - diagnostics only
        pass


def _device_types_of_distribution(record: BackendRecord) -> tuple[tvm_ffi.DLDeviceType, ...]:
    """Device types the core attributes to this backend's distribution, for a hook that failed
    before it could declare its own (from the core's release-train table)."""
    from ..runtime import _ffi_api

    dist = (record.distribution or f"tvm-runtime-{record.name}").lower()
    return tuple(t for t in tvm_ffi.DLDeviceType if str(_ffi_api.DistributionForDevice(int(t))) == dist)


# ---- a backend that is not installed ----------------------------------------------------------


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
