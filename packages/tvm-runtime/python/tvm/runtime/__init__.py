"""TVM runtime namespace (apache-tvm 0.27 compatible)."""

# isort: skip_file
from tvm_ffi import Object, Shape as ShapeTuple, convert
from tvm_ffi._dtype import DataTypeCode
from tvm_ffi._dtype import dtype as DataType  # noqa: N812  (apache-tvm name)

from .. import _lazy
from .device import Device, DeviceAttrKind
from ._tensor import (
    Tensor,
    cpu,
    cuda,
    device,
    device_from_target,
    empty,
    ext_dev,
    from_dlpack,
    hexagon,
    metal,
    opencl,
    rocm,
    tensor,
    vpi,
    vulkan,
    webgpu,
)
from .module import (
    BenchmarkResult,
    Module,
    enabled,
    load_module,
    load_static_library,
    num_threads,
    system_lib,
)
from .params import (
    load_param_dict,
    load_param_dict_from_file,
    save_param_dict,
    save_param_dict_to_file,
)
from .memory import release_idle_memory
from . import _relax_run  # noqa: F401  (registers relax.run.print / relax.run.assert_op)


# `tvm.runtime.vm` and `tvm.runtime.disco` (tvm-runtime-extra) are imported on first use so
# that `import tvm` stays cheap.
__getattr__ = _lazy.submodules_on_first_use(__name__, ("vm", "disco"))


__all__ = [
    "BenchmarkResult",
    "DataType",
    "DataTypeCode",
    "Device",
    "DeviceAttrKind",
    "Module",
    "Object",
    "ShapeTuple",
    "Tensor",
    "convert",
    "cpu",
    "cuda",
    "device",
    "device_from_target",
    "disco",
    "empty",
    "enabled",
    "ext_dev",
    "from_dlpack",
    "hexagon",
    "load_module",
    "load_param_dict",
    "load_param_dict_from_file",
    "load_static_library",
    "metal",
    "num_threads",
    "opencl",
    "release_idle_memory",
    "rocm",
    "save_param_dict",
    "save_param_dict_to_file",
    "system_lib",
    "tensor",
    "vm",
    "vpi",
    "vulkan",
    "webgpu",
]
