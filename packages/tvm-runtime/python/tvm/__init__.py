"""tvm-runtime: run models and kernels compiled by apache-tvm 0.27, without the compiler.

This package is API-compatible with apache-tvm 0.27's runtime: ``tvm.device``, ``tvm.cpu`` and
friends, ``tvm.runtime.tensor/empty/load_module``, ``Module.time_evaluator``,
``tvm.get_global_func``.  Device backends (OpenCL, Vulkan, CUDA, ...) are separate wheels,
discovered through the ``tvm.backends`` entry-point group, which also runs plugins written for
apache-tvm 0.27 (``tvm_foo = "tvm_foo:_autoload"``); ``tvm.backend.loader`` and
``tvm.target.detect_target`` have apache-tvm's API.  Run ``python -m tvm.backend`` to see what is
installed and working.
"""

# isort: skip_file
# tvm_ffi first: it loads libtvm_ffi.so RTLD_GLOBAL, which the core DSO links against.
import tvm_ffi  # noqa: F401

from . import _core, _lazy
from . import error  # registers apache-tvm 0.27's exception classes with tvm-ffi, first

__version__ = _core.VERSION

from tvm_ffi import (
    Object,
    convert,
    get_global_func,
    register_global_func,
    register_object,
)

from . import runtime
from .runtime import (
    DataType,
    DataTypeCode,
    Device,
    Tensor,
    device,
    device_from_target,
    cpu,
    cuda,
    rocm,
    opencl,
    metal,
    vpi,
    vulkan,
    webgpu,
    ext_dev,
    hexagon,
)
from . import backend
from ._conflicts import warn_if_mixed_install as _warn_if_mixed_install

_warn_if_mixed_install()
backend._discover_at_import()


# apache-tvm 0.27 imports these at `import tvm`; here they load on first use (tvm.rpc,
# tvm.contrib, ... cost nothing until a script reaches them).
__getattr__ = _lazy.submodules_on_first_use(__name__, ("contrib", "exec", "relax", "rpc", "target"))


__all__ = [
    "__version__",
    "DataType",
    "DataTypeCode",
    "Device",
    "Object",
    "Tensor",
    "backend",
    "convert",
    "cpu",
    "cuda",
    "device",
    "device_from_target",
    "error",
    "ext_dev",
    "get_global_func",
    "hexagon",
    "metal",
    "opencl",
    "register_global_func",
    "register_object",
    "rocm",
    "runtime",
    "vpi",
    "vulkan",
    "webgpu",
]
