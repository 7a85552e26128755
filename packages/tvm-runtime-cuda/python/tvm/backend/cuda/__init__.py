"""tvm-runtime-cuda: the CUDA backend hook of tvm-runtime.

Importing this module is cheap and touches no CUDA library: it only declares the backend
(``BACKEND``), and the core's loader (at ``import tvm``, or ``tvm.backend.loader.load("cuda")``)
loads ``libtvm_runtime_cuda.so`` and registers the target detector.  The NVIDIA driver (``libcuda.so.1``, or
``$TVM_CUDA_DRIVER_LIBRARY``) is opened when a device is first used, and NVRTC only when an
artifact that holds CUDA C++ source first runs (``pip install "tvm-runtime-cuda[nvrtc]"``).

Environment:
  ``TVM_CUDA_DRIVER_LIBRARY``     driver library to open instead of libcuda.so.1;
  ``TVM_CUDA_NVRTC_PATH``         NVRTC library to use (skips the search), with
  ``TVM_CUDA_NVRTC_INCLUDE_DIRS`` colon-separated CUDA header directories for it;
  ``TVM_CUDA_NVRTC_ALLOW_FOREIGN_HEADERS=1`` accept CUDA headers from another release or
                                  install than NVRTC's own (normally refused);
  ``TVM_CUDA_CACHE_DIR``          compiled-kernel cache (default ~/.cache/tvm-runtime/cuda);
  ``TVM_CUDA_CACHE_DISABLE=1``    never read or write that cache;
  ``TVM_CUDA_NVRTC_FAST_MATH=0``  compile source without --use_fast_math;
  ``TVM_CUDA_NVRTC_EXTRA_OPTS``   extra NVRTC options, whitespace-separated;
  ``TVM_NCCL_LIBRARY``            NCCL library for Disco's nccl collectives (skips the search;
                                  ``pip install "tvm-runtime-cuda[nccl]"`` installs one);
  ``TVM_CUBLASLT_LIBRARY``        cuBLASLt for cublas_json modules (skips the search;
                                  ``pip install "tvm-runtime-cuda[cublas]"`` installs one);
  ``TVM_CUDNN_LIBRARY``           cuDNN for cudnn_json modules (skips the search;
                                  ``pip install "tvm-runtime-cuda[cudnn]"`` installs one);
  ``TVM_CUDART_LIBRARY``          the CUDA runtime for artifacts whose host code links it
                                  (CUTLASS kernels; ``pip install "tvm-runtime-cuda[cudart]"``).
"""

from __future__ import annotations

from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

from ._event import Event
from ._ffi import cuda_global as _global
from ._libraries import LOCATOR_GLOBAL as _LIBRARY_LOCATOR
from ._libraries import locate_library
from ._nccl import LOCATOR_GLOBAL as _NCCL_LOCATOR
from ._nccl import locate_nccl
from ._nvrtc import LOCATOR_GLOBAL, locate_nvrtc

_CUDA = hook_api.DeviceType.kDLCUDA


def _register_locators() -> None:
    import tvm_ffi

    # Called by the C++ side on the first source compile, never before.
    tvm_ffi.register_global_func(LOCATOR_GLOBAL, locate_nvrtc, override=True)
    # Called by the C++ side when a Disco session first initialises NCCL.
    tvm_ffi.register_global_func(_NCCL_LOCATOR, locate_nccl, override=True)
    # Called when a cublas_json/cudnn_json module or a CUDA-runtime host library needs one.
    tvm_ffi.register_global_func(_LIBRARY_LOCATOR, locate_library, override=True)


def cublaslt_status() -> str:
    """ "" when cuBLASLt (for cublas_json modules) can be opened, else why not and what to install."""
    return str(_global("cublaslt_status")())


def cudnn_status() -> str:
    """ "" when cuDNN (for cudnn_json modules) can be opened, else why not and what to install."""
    return str(_global("cudnn_status")())


def driver_info() -> dict[str, Any]:
    """Driver library, CUDA version it supports, device count and status."""
    return dict(_global("driver_info")())


def detect_target(dev: Any) -> dict[str, Any]:
    """The target config to pass to the TVM compiler (``tvm.target.Target(cfg)``) for ``dev``."""
    if dev.dlpack_device_type() != _CUDA:
        raise ValueError(f"cannot detect a CUDA target for {dev}: not a CUDA device")
    hook_api.require_device(dev)
    import tvm_ffi

    prop = tvm_ffi.get_global_func("runtime.GetDeviceTargetProperty")
    threads = int(dev.max_threads_per_block)
    return {
        "kind": "cuda",
        "arch": str(prop(dev, "arch")),
        "max_shared_memory_per_block": int(dev.max_shared_memory_per_block),
        "max_threads_per_block": threads,
        "max_num_threads": threads,
        "thread_warp_size": int(dev.warp_size),
        "registers_per_block": int(prop(dev, "registers_per_block")),
        "l2_cache_size_bytes": int(dev.l2_cache_size_bytes),
    }


def nvrtc_info(driver_major: int = 0) -> dict[str, Any]:
    """The NVRTC the runtime would use (path, version, targets, header directories).

    ``driver_major`` is the CUDA major version the code must load on (0: any).  Raises
    ``RuntimeError`` naming the pip command to run when no NVRTC is installed.
    """
    info = dict(_global("nvrtc_info")(driver_major))
    for key in ("supported_archs", "include_dirs", "cccl_dirs"):
        info[key] = list(info[key])
    return info


def compile_source(
    source: str, arch: str, *, driver_major: int = 0, use_cache: bool = True
) -> dict[str, Any]:
    """Compile CUDA C++ source as the runtime does for a GPU of ``arch``: "sm_86", "sm_90a"
    (arch-specific, what a Hopper device gets) or "sm_100f" (family-specific), exactly that.

    Works without a GPU.  Returns ``image`` (cubin or PTX bytes), ``format``, ``target``,
    ``compiler``, ``cache_file``, ``from_cache`` and ``options``.
    """
    out = dict(_global("compile_source")(source, arch, driver_major, use_cache))
    out["image"] = bytes(out["image"])
    out["options"] = list(out["options"])
    return out


def describe_module(mod: Any) -> dict[str, Any]:
    """Format and function table (arg types, launch tags) of a loaded ``cuda`` device module."""
    return hook_api.kernel_module_description(_global("describe_module")(mod))


def cache_dir() -> str:
    """Where compiled kernels (and NVRTC's unpacked headers) are cached."""
    return str(_global("cache_dir")())


BACKEND = hook_api.declare_backend(
    "cuda",
    device_types=[_CUDA],
    host_device_types=[hook_api.DeviceType.kDLCUDAHost],  # page-locked host memory: no target
    detect_target=detect_target,
    diagnostics=driver_info,
    after_load=_register_locators,
)

# apache-tvm's names.
detect_target_from_device = detect_target
register_backend, driver_status = BACKEND.register_backend, BACKEND.driver_status

__all__ = [
    "BACKEND",
    "Event",
    "cache_dir",
    "compile_source",
    "describe_module",
    "detect_target",
    "detect_target_from_device",
    "driver_info",
    "driver_status",
    "cublaslt_status",
    "cudnn_status",
    "locate_library",
    "locate_nccl",
    "locate_nvrtc",
    "nvrtc_info",
    "register_backend",
]
