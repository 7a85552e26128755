"""The public API for backend hook modules (``tvm.backend.<name>``), versioned.

A hook of our protocol is the module an entry point of the ``tvm.backends`` group names
(``<name> = "tvm.backend.<name>"``).  It *declares* what the backend is, in one module-level
name, and the loader (``tvm.backend.loader``) does the rest::

    BACKEND = hook_api.declare_backend(
        "opencl", device_types=(hook_api.DeviceType.kDLOpenCL,), detect_target=detect_target
    )

At ``import tvm`` (or ``tvm.backend.loader.load(name)``) the loader loads ``library`` with
:func:`load_backend_dso` (``RTLD_LOCAL``, the core's ABI check, the DSO's registration), calls
``after_load`` if given, registers ``detect_target`` for every kind in ``device_types`` and, if
anything raises, reports it as one warning on those device types ("the opencl backend failed
to load: ...; fix: ...").  ``declare_backend`` takes:

* ``name``: the entry point's name;
* ``library``: the path of the backend DSO; by default ``libtvm_runtime_<name>.so`` beside the
  hook, for a hook that is the module ``tvm.backend.<name>`` (the naming convention of
  ``tvm_runtime/c_api.h``);
* ``device_types``: the ``DeviceType`` members whose devices the backend serves (the target
  detector is registered for each); ``host_device_types``: host-memory types it also
  registers (``kDLCUDAHost``), which have no target;
* ``detect_target(dev)``: the target config of a device (optional);
* ``driver_status()``: why the device is unusable, "" when it works (optional: by default the
  core's status of the first device type);
* ``diagnostics()``: a dict of driver facts for ``python -m tvm.backend --json`` (optional);
* ``after_load()``: setup that needs the loaded DSO, e.g. telling it where a vendor library is
  (optional).

The declaration's ``register_backend()`` and ``driver_status()`` are apache-tvm's module-level
names; a hook re-exports them (``register_backend = BACKEND.register_backend``).  A hook that
calls C functions of its own DSO gets its ``ctypes`` handle from ``BACKEND.library_handle()``.

Versions (``HOOK_API_VERSION``, major and minor):

* **1.1** (this release): the declaration above, and :func:`kernel_module_description` for
  hooks that describe their kernel modules.  Hooks written for 1.0 keep working, with a
  ``DeprecationWarning`` that says what to change; 2.0 removes the 1.0 form.
* **1.0** (deprecated): the hook defines ``register_backend()`` (or its older name
  ``register()``), which loads its DSO with :func:`load_backend_dso` and may call
  :func:`register_device_target_detector`; ``DEVICE_TYPES``, the device types a failure is
  reported on; and optionally ``detect_target(dev)``, registered for every kind in
  ``DEVICE_TYPES`` when ``register_backend()`` registered no detector itself.

Hooks import only this module from the core; everything else in ``tvm.backend`` is private
and may change between releases.  A hook that needs a newer API checks ``HOOK_API_VERSION``
(same major, minor at least what it needs).  Plugins of apache-tvm 0.27's protocol (an entry
point naming a callable, ``tvm_foo = "tvm_foo:_autoload"``) are not hooks: they are called
unchanged and need nothing from here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Callable

from tvm_ffi import DLDeviceType

from ..runtime.device import DeviceAttrKind
from . import loader
from ._declaration import BackendDeclaration, DeviceTypeLike
from ._dso import BackendABIError, BackendLoadError, load_backend_dso
from ._hook import driver_status, require_device
from ._target import register_device_target_detector

# (major, minor): a new minor only adds (1.1: declare_backend, kernel_module_description); a new
# major may remove or change what is here.
HOOK_API_VERSION = (1, 1)

DeviceType = DLDeviceType


def declare_backend(
    name: str,
    *,
    library: str | os.PathLike[str] | None = None,
    device_types: Iterable[DeviceTypeLike] = (),
    host_device_types: Iterable[DeviceTypeLike] = (),
    detect_target: Callable[[Any], Any] | None = None,
    driver_status: Callable[[], str] | None = None,
    diagnostics: Callable[[], dict[str, Any]] | None = None,
    after_load: Callable[[], None] | None = None,
) -> BackendDeclaration:
    """What the hook's backend is; bind the result to the hook's module-level ``BACKEND``.

    Raises ``TypeError``/``ValueError`` naming the argument that is wrong.  Loads nothing: the
    loader does, at ``import tvm`` or on ``tvm.backend.loader.load(name)``.
    """
    return BackendDeclaration(
        name,
        library=library,
        device_types=device_types,
        host_device_types=host_device_types,
        detect_target=detect_target,
        driver_status=driver_status,
        diagnostics=diagnostics,
        after_load=after_load,
        load=loader.load,
    )


def kernel_module_description(info: Any) -> dict[str, Any]:
    """A kernel module's description as plain Python: ``fmt`` and ``kernels`` (name -> ``name``,
    ``arg_types``, ``launch_param_tags``, ``arg_extra_tags``), from the map a backend DSO's
    ``describe_module`` global returns for it (the shared FunctionInfo table of
    ``tvm_runtime/backend/``)."""
    kernels = {
        str(name): {
            "name": str(k["name"]),
            "arg_types": [str(t) for t in k["arg_types"]],
            "launch_param_tags": [str(t) for t in k["launch_param_tags"]],
            "arg_extra_tags": [int(t) for t in k["arg_extra_tags"]],
        }
        for name, k in info["kernels"].items()
    }
    return {"fmt": str(info["fmt"]), "kernels": kernels}


__all__ = [
    "HOOK_API_VERSION",
    "BackendABIError",
    "BackendDeclaration",
    "BackendLoadError",
    "DeviceAttrKind",
    "DeviceType",
    "declare_backend",
    "driver_status",
    "kernel_module_description",
    "load_backend_dso",
    "register_device_target_detector",
    "require_device",
]
