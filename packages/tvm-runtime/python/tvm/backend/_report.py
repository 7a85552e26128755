"""The data behind ``python -m tvm.backend``: core, conflicts, backends and their devices."""

from __future__ import annotations

import importlib.metadata as md
import os
from typing import Any

import tvm_ffi

from .. import _conflicts, _core
from ..runtime import Device, _ffi_api, device
from ._declaration import BackendDeclaration
from ._registry import list_backends
from ._target import detect_target_from_device

_CPU = tvm_ffi.DLDeviceType.kDLCPU
_MAX_DEVICES = 16
_ATTRS = (
    "device_name",
    "compute_version",
    "max_threads_per_block",
    "max_shared_memory_per_block",
    "warp_size",
    "multi_processor_count",
    "total_global_memory",
)


def _tvm_distributions() -> list[dict[str, str]]:
    """Every installed distribution that ships files in the top-level `tvm` package."""
    found = []
    for dist in md.distributions():
        name = dist.metadata["Name"]
        top = (dist.read_text("top_level.txt") or "").split()
        files = dist.files or []
        ships_tvm = "tvm" in top or any(str(f).startswith("tvm/") for f in files)
        if ships_tvm:
            found.append({"name": name, "version": dist.version})
    return found


def conflicts() -> list[str]:
    problems = []
    ours = {"tvm-runtime"}
    for d in _tvm_distributions():
        lowered = d["name"].lower()
        if lowered in _conflicts.FOREIGN_DISTRIBUTIONS or not (
            lowered in ours or lowered.startswith("tvm-runtime-")
        ):
            problems.append(
                f"{d['name']} {d['version']} also installs the `tvm` package next to tvm-runtime "
                f"{_core.VERSION}; their files overwrite each other. {_conflicts.FIX_HINT}"
            )
    for marker in _conflicts.foreign_marker_files():
        problems.append(f"foreign file tvm/{marker} found inside tvm-runtime's package directory")
    return problems


def _device_info(dev: Device) -> dict[str, Any]:
    info: dict[str, Any] = {"device": str(dev)}
    for attr in _ATTRS:
        try:
            value = getattr(dev, attr)
        except Exception as err:  # noqa: BLE001 - report, never fail
            value = f"<error: {err}>"
        if value is not None:
            info[attr] = value
    try:
        info["target"] = detect_target_from_device(dev)
    except Exception as err:  # noqa: BLE001
        info["target_error"] = str(err)
    return info


def _devices_of(device_type: tvm_ffi.DLDeviceType) -> tuple[list[dict[str, Any]], str]:
    """(existing devices, driver status) of a device type."""
    status = ""
    try:
        status = str(_ffi_api.DeviceDriverStatus(int(device_type)))
    except Exception as err:  # noqa: BLE001
        status = str(err)
    devices = []
    # The CPU "exists" for every index; list it once.
    for index in range(1 if device_type == _CPU else _MAX_DEVICES):
        dev = device(int(device_type), index)
        try:
            exists = dev.exist
        except Exception as err:  # noqa: BLE001
            status = status or str(err)
            break
        if not exists:
            break
        devices.append(_device_info(dev))
    return devices, status


def _diagnostics(declaration: BackendDeclaration) -> dict[str, Any]:
    try:
        return declaration.diagnostics()
    except Exception as err:  # noqa: BLE001 - report, never fail
        return {"error": f"{type(err).__name__}: {err}"}


def kernel_cache(name: str) -> dict[str, Any] | None:
    """The backend's persistent kernel cache (its `tvm_runtime.<name>.cache_info`), if it has one."""
    info = tvm_ffi.get_global_func(f"tvm_runtime.{name}.cache_info", allow_missing=True)
    if info is None:
        return None
    try:
        return {str(k): v for k, v in info().items()}
    except Exception as err:  # noqa: BLE001 - report, never fail
        return {"error": str(err)}


def collect() -> dict[str, Any]:
    """Everything the diagnostic command shows, as JSON-serialisable data."""
    cpu_devices, _ = _devices_of(_CPU)
    report: dict[str, Any] = {
        "core": {
            "distribution": "tvm-runtime",
            "version": _core.VERSION,
            "library": _core.LIB_PATH,
            "abi_version": _core.abi_version_str(_core.ABI_VERSION),
            "apache_tvm_ffi": tvm_ffi.__version__,
            "num_threads": int(_ffi_api.NumThreads()),
            "devices": cpu_devices,
            # Where misaligned CPU weights are shared between processes (the weight store).
            "weight_cache": kernel_cache("weights"),
        },
        "autoload": os.environ.get("TVM_DEVICE_BACKEND_AUTOLOAD", "1"),
        "allow_list": os.environ.get("TVM_BACKENDS"),
        "conflicts": conflicts(),
        "backends": [],
    }
    for name, record in sorted(list_backends().items()):
        entry: dict[str, Any] = {
            "name": name,
            "distribution": record.distribution,
            "version": record.version,
            "entry_point": record.module,
            "protocol": record.protocol,
            "status": record.status,
            "reason": record.reason,
            "fix": record.fix,
        }
        entry["library"] = record.library
        entry["abi_version"] = _core.abi_version_str(record.abi_version) if record.abi_version else None
        entry["hook_api"] = record.hook_api
        if record.deprecation:
            entry["deprecation"] = record.deprecation
        if record.status == "loaded":
            entry["kernel_cache"] = kernel_cache(name)
            entry["device_types"] = []
            for device_type in record.device_types:
                devices, status = _devices_of(device_type)
                entry["device_types"].append(
                    {
                        "type": int(device_type),
                        "name": str(_ffi_api.DeviceTypeName(int(device_type))),
                        "driver": status or "ok",
                        "devices": devices,
                    }
                )
            if record.declaration is not None:
                entry["diagnostics"] = _diagnostics(record.declaration)
        report["backends"].append(entry)
    return report
