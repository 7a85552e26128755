"""Backend discovery for tvm-runtime.

Backends are separate wheels (``tvm-runtime-opencl``, ...) that ship only
``tvm/backend/<name>/`` and register an entry point in the ``tvm.backends`` group pointing at
their hook module.  The hook declares what the backend is (``BACKEND =
hook_api.declare_backend(...)``, see :mod:`tvm.backend.hook_api`, the API hooks use).  At
``import tvm`` discovery (:mod:`tvm.backend._discovery`) creates one record per entry point in
the one registry (:mod:`tvm.backend._registry`); the loader (:mod:`tvm.backend.loader`) then
activates each: it loads the backend DSO after the core's ABI check, registers the device's
target detector and sets the record's status.  Entry points that name a callable instead
(apache-tvm 0.27's out-of-tree plugins, ``tvm_foo = "tvm_foo:_autoload"``) are called after
every hook.  ``tvm.backend.loader.load(name)`` / ``is_loaded(name)`` load a backend on demand,
as in apache-tvm.

Environment:
  ``TVM_DEVICE_BACKEND_AUTOLOAD=0``  do not load any backend at import;
  ``TVM_BACKENDS=cuda,vulkan``      load only the listed backends.

A backend that fails to load produces one ``RuntimeWarning`` naming the distribution, version,
reason and the pip command that fixes it; ``import tvm`` always survives.
``python -m tvm.backend`` prints the full report.
"""

# A backend wheel's hook lives in this package but may be installed in another sys.path entry
# than the core (pip --target, --user, PYTHONPATH), so extend __path__ with every
# `<entry>/tvm/backend` directory that is a namespace portion (has no __init__.py).
# pkgutil.extend_path would only search the parent package's path, not sys.path.
import os as _os
import sys as _sys

for _entry in _sys.path:
    _portion = _os.path.join(_entry or _os.getcwd(), "tvm", "backend")
    if (
        _portion not in __path__
        and _os.path.isdir(_portion)
        and not _os.path.exists(_os.path.join(_portion, "__init__.py"))
    ):
        __path__.append(_portion)

from ._distribution_status import register as _register_distribution_status  # noqa: E402
from ._dso import BackendLoadError, load_backend_dso  # noqa: E402
from ._registry import BackendRecord, backend_errors, is_loaded, list_backends  # noqa: E402
from ._target import detect_target_from_device, register_device_target_detector  # noqa: E402
from .loader import (  # noqa: E402
    _discover_at_import,  # noqa: F401  (called by tvm/__init__.py)
    load,
    load_backends,
)

_register_distribution_status()  # for the core's "cannot find function" errors

__all__ = [
    "BackendLoadError",
    "BackendRecord",
    "backend_errors",
    "detect_target_from_device",
    "is_loaded",
    "list_backends",
    "load",
    "load_backend_dso",
    "load_backends",
    "register_device_target_detector",
]
