"""The one registry of backends: a record per backend, keyed by its entry-point name.

Discovery (:mod:`tvm.backend._discovery`) creates the records from the ``tvm.backends``
entry points; the loader (:mod:`tvm.backend.loader`) activates them and is the only writer of
their status.  Nothing else keeps backend state: ``python -m tvm.backend``, ``is_loaded`` and
``list_backends`` all read these records.  This module imports nothing of ``tvm.backend``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import importlib.metadata as md

    from tvm_ffi import DLDeviceType

    from ._declaration import BackendDeclaration

# What a record's status can be; the loader moves a record from "pending" to one of the others.
STATUSES = ("pending", "loaded", "failed", "disabled", "not-allowed")


@dataclass
class BackendRecord:
    """Everything known about one backend entry point."""

    name: str
    module: str  # what the entry point names: "tvm.backend.opencl" or "tvm_foo:_autoload"
    distribution: str | None = None
    version: str | None = None
    status: str = "pending"
    reason: str | None = None
    fix: str | None = None
    # "hook": the entry point names a hook module (our protocol); "callable": it names a
    # function called without arguments (apache-tvm 0.27's protocol for out-of-tree backends).
    protocol: str = "hook"
    # The hook API the hook is written for ("1.1": a declaration; "1.0": the deprecated
    # register_backend()/DEVICE_TYPES form), known once the hook module is imported.
    hook_api: str | None = None
    # What the hook must change, for a hook written for a deprecated hook API.
    deprecation: str | None = None
    declaration: BackendDeclaration | None = field(default=None, repr=False)
    # Every device type the backend serves (its devices and any host-memory companions).
    device_types: tuple[DLDeviceType, ...] = ()
    library: str | None = None  # the backend DSO: declared path, then the loaded one
    abi_version: int | None = None  # the core ABI the loaded DSO was built for
    hook: Any = field(default=None, repr=False)  # the hook module or plugin callable
    entry_point: md.EntryPoint | None = field(default=None, repr=False)
    # Other distributions that provide the same name: never imported (the first on sys.path wins).
    shadowed: list[str | None] = field(default_factory=list)


_RECORDS: dict[str, BackendRecord] = {}


def add(record: BackendRecord) -> BackendRecord:
    """Register a new record (its name must be new)."""
    if record.name in _RECORDS:
        raise ValueError(f"backend {record.name!r} already has a record")
    _RECORDS[record.name] = record
    return record


def record_of(name: str) -> BackendRecord | None:
    """The record of backend ``name`` (case-insensitive), if there is one."""
    return _RECORDS.get(name.lower())


def records() -> list[BackendRecord]:
    """Every record, in the order discovery created them."""
    return list(_RECORDS.values())


def list_backends() -> dict[str, BackendRecord]:
    """Records of every backend seen by discovery, keyed by name."""
    return dict(_RECORDS)


def backend_errors() -> dict[str, str]:
    """``{name: reason}`` for backends that failed to load."""
    return {n: r.reason or "" for n, r in _RECORDS.items() if r.status == "failed"}


def is_loaded(name: str) -> bool:
    """Whether backend ``name`` registered successfully (at ``import tvm`` or through ``load``)."""
    record = record_of(name)
    return record is not None and record.status == "loaded"
