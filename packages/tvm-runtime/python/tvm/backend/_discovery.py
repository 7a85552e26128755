"""Entry-point discovery of backends (group ``tvm.backends``), in both protocols.

An entry point that names a module (``opencl = "tvm.backend.opencl"``) is a hook of ours: its
``register_backend()`` runs (see :mod:`tvm.backend.hook_api`).  One that names a callable
(``tvm_foo = "tvm_foo:_autoload"``) is an apache-tvm 0.27 style plugin: it is called with no
arguments after every hook.  Failures are one ``RuntimeWarning`` each; ``import tvm`` survives.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import pathlib
import sys
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

import tvm_ffi

from .. import _core
from . import loader
from ._dso import BackendABIError

GROUP = "tvm.backends"
_FALSY = {"0", "false", "no", "off"}


@dataclass
class BackendRecord:
    """What discovery found about one backend entry point."""

    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    status: str = "pending"  # loaded | failed | disabled | not-allowed | duplicate
    reason: str | None = None
    fix: str | None = None
    hook: Any = field(default=None, repr=False)
    # "hook": the entry point names a hook module (our protocol); "callable": it names a
    # function called without arguments (apache-tvm 0.27's protocol for out-of-tree backends).
    protocol: str = "hook"
    entry_point: md.EntryPoint | None = field(default=None, repr=False)


_RECORDS: dict[str, BackendRecord] = {}


def _entry_points() -> list[md.EntryPoint]:
    """Entry points of GROUP, in sys.path order.

    ``importlib.metadata.entry_points()`` builds a Distribution for every installed package and
    parses all their entry_points.txt (several ms in a large environment, paid by every
    ``import tvm``).  For plain directories on sys.path we read only the metadata folders whose
    entry_points.txt mentions our group, then let importlib parse those; anything else on
    sys.path (zip files, custom finders) goes through importlib.metadata as usual.
    """
    found: list[md.EntryPoint] = []
    seen: set[str] = set()
    needs_importlib = False
    for entry in sys.path:
        directory = entry or os.getcwd()
        if not os.path.isdir(directory):
            needs_importlib = needs_importlib or bool(entry)
            continue
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            path = os.path.join(directory, name)
            try:
                with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            if f"[{GROUP}]" not in text:
                continue
            dist = md.PathDistribution(pathlib.Path(path))
            key = (dist.metadata["Name"] or name).lower().replace("_", "-")
            if key in seen:  # the first one on sys.path wins, as for imports
                continue
            seen.add(key)
            found.extend(ep for ep in dist.entry_points if ep.group == GROUP)
    if needs_importlib:
        known = {(ep.name, ep.value) for ep in found}
        for ep in _importlib_entry_points():
            if (ep.name, ep.value) not in known:
                found.append(ep)
    return found


def _importlib_entry_points() -> list[md.EntryPoint]:
    if sys.version_info >= (3, 10):
        return list(md.entry_points(group=GROUP))
    return list(md.entry_points().get(GROUP, []))  # type: ignore[attr-defined]


def _dist_of(ep: md.EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


def _fix_command(record: BackendRecord, abi_mismatch: bool) -> str:
    dist = record.distribution or f"tvm-runtime-{record.name}"
    if abi_mismatch:
        # The meta-package pins a release train whose wheels were tested together.
        return (
            f'pip install "tvm[{record.name}]=={_core.VERSION}"'
            f"  (or upgrade both: pip install -U tvm-runtime {dist})"
        )
    pin = f"=={record.version}" if record.version else ""
    return f"pip install --force-reinstall --no-deps {dist}{pin}"


def _autoload_enabled() -> bool:
    return os.environ.get("TVM_DEVICE_BACKEND_AUTOLOAD", "1").strip().lower() not in _FALSY


def _allow_list() -> set[str] | None:
    raw = os.environ.get("TVM_BACKENDS")
    if raw is None or not raw.strip():
        return None
    return {n.strip().lower() for n in raw.split(",") if n.strip()}


def _failure_fix(record: BackendRecord, err: BaseException) -> str:
    if record.protocol == "callable":
        # A third-party plugin: we cannot know its fix, only how to get past it.
        dist = record.distribution or "the distribution that declares it"
        return (
            f"update or reinstall {dist}, or leave it out with TVM_BACKENDS (a comma-separated "
            "allow-list of backend names)"
        )
    return _fix_command(record, isinstance(err, BackendABIError))


def mark_failed(record: BackendRecord, err: BaseException) -> None:
    record.status = "failed"
    record.reason = f"{type(err).__name__}: {err}"
    record.fix = _failure_fix(record, err)
    if record.protocol == "hook":
        _note_failure(record)


def mark_loaded(record: BackendRecord, target: Any) -> None:
    record.status = "loaded"
    record.reason = record.fix = None
    if isinstance(target, types.ModuleType):
        record.hook = target


def _warn_failure(record: BackendRecord) -> None:
    who = f"{record.distribution or 'unknown distribution'} {record.version or ''}".strip()
    if record.protocol == "callable":
        what = f"tvm backend plugin '{record.name}' (entry point {record.name} = {record.module}, {who})"
    else:
        what = f"tvm backend '{record.name}' ({who})"
    warnings.warn(
        f"{what} failed to load: {record.reason}. Fix: {record.fix}",
        RuntimeWarning,
        stacklevel=5,
    )


def _resolve(record: BackendRecord) -> Any:
    """Import what the entry point names: a hook module, or (``pkg:attr``) a plugin callable."""
    assert record.entry_point is not None
    target = record.entry_point.load()
    if isinstance(target, types.ModuleType):
        record.protocol = "hook"
        record.hook = target
    return target


def _load_entry(record: BackendRecord) -> None:
    """Register one entry point of either protocol; a failure becomes one warning."""
    try:
        target = _resolve(record)
        if isinstance(target, types.ModuleType):
            loader.register_hook(record.name, target)
        else:
            loader.run_plugin(record.name, target)
        mark_loaded(record, target)
    # A broken backend must never break `import tvm`, not even one that calls sys.exit().
    except (Exception, SystemExit) as err:  # noqa: BLE001
        mark_failed(record, err)
        _warn_failure(record)


def _note_failure(record: BackendRecord) -> None:
    # Later errors ("no backend for device opencl") then explain why instead of "install it".
    try:
        from ..runtime import _ffi_api

        device_types = getattr(record.hook, "DEVICE_TYPES", None) or _device_types_of(record)
        for device_type in device_types:
            _ffi_api.NoteBackendFailure(int(device_type), f"{record.reason}; fix: {record.fix}")
    except Exception:  # noqa: BLE001 - diagnostics only
        pass


def _device_types_of(record: BackendRecord) -> tuple[tvm_ffi.DLDeviceType, ...]:
    """Device types the core attributes to this backend's distribution, for a hook that failed
    before it could declare its own ``DEVICE_TYPES`` (from the core's release-train table)."""
    from ..runtime import _ffi_api

    dist = (record.distribution or f"tvm-runtime-{record.name}").lower()
    return tuple(t for t in tvm_ffi.DLDeviceType if str(_ffi_api.DistributionForDevice(int(t))) == dist)


def load_backends(force: bool = False) -> dict[str, BackendRecord]:
    """Discover (and, unless disabled, load) every backend; safe to call more than once.

    Entry points that name a hook module (our protocol) register first, then the ones that name
    a callable (apache-tvm's protocol: ``tvm_foo = "tvm_foo:_autoload"``) are called, so a
    plugin sees every backend of ours.  ``force=True`` loads even when autoload is disabled by
    the environment; the ``TVM_BACKENDS`` allow-list applies to both protocols.
    """
    autoload = force or _autoload_enabled()
    allow = _allow_list()
    plugins: list[BackendRecord] = []
    for ep in _entry_points():
        name = ep.name.lower()
        existing = _RECORDS.get(name)
        if existing is not None and existing.status not in ("disabled", "not-allowed"):
            if existing.module != ep.value:
                dist, version = _dist_of(ep)
                warnings.warn(
                    f"two distributions provide tvm backend '{name}': "
                    f"{existing.distribution} and {dist}; using {existing.distribution}. "
                    f"Uninstall one of them.",
                    RuntimeWarning,
                    stacklevel=3,
                )
            continue
        dist, version = _dist_of(ep)
        record = BackendRecord(
            name=name,
            module=ep.value,
            distribution=dist,
            version=version,
            # `module:attr` names a callable (apache-tvm's protocol), a bare module our hook.
            protocol="callable" if ep.attr else "hook",
            entry_point=ep,
        )
        _RECORDS[name] = record
        if not autoload:
            record.status = "disabled"
            record.reason = "TVM_DEVICE_BACKEND_AUTOLOAD=0"
        elif allow is not None and name not in allow:
            record.status = "not-allowed"
            record.reason = f"not in TVM_BACKENDS={os.environ.get('TVM_BACKENDS')}"
        elif record.protocol == "callable":
            plugins.append(record)
        else:
            _load_entry(record)
    for record in plugins:
        _load_entry(record)
    return dict(_RECORDS)


def _discover_at_import() -> None:
    load_backends()


def record_of(name: str) -> BackendRecord | None:
    """What discovery found for entry point ``name`` (lower case), if anything."""
    return _RECORDS.get(name)


def list_backends() -> dict[str, BackendRecord]:
    """Records of every backend seen by discovery, keyed by name."""
    return dict(_RECORDS)


def backend_errors() -> dict[str, str]:
    """``{name: reason}`` for backends that failed to load."""
    return {n: r.reason or "" for n, r in _RECORDS.items() if r.status == "failed"}
