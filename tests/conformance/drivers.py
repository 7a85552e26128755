"""How each device backend opens its vendor library, for the device conformance tests: the
variable that replaces the library search, what the backend says when the library is missing or
of another kind, and the fake (tests/fakes) its device runs on where this machine has none.  A new
device backend adds one entry here (test_missing_driver.py::
test_every_device_backend_says_how_its_driver_is_found fails until it does) and gets the tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import fakes

from conftest import ARTIFACTS


@dataclass(frozen=True)
class Driver:
    variable: str  # replaces the whole library search
    library: str  # the file the search looks for
    missing: str  # the status when it cannot be opened
    wrong_kind: str  # the status for a library of another kind (libm.so.6)
    advice: str  # what the status tells the user to do
    unavailable: str  # the RuntimeError of any device use
    api: str  # the name in skip reasons and TVM_TEST_REQUIRE_<API> (backend_testing.devices)
    # The environment that runs the device on its fake where this machine has no device; None:
    # the device is only tested where it exists (CUDA: the fake queues a copy to pageable host
    # memory, which the driver completes before returning, so copyto(cpu) reads stale data).
    fake: Callable[[], dict[str, str]] | None = None


DRIVERS = {
    "cuda": Driver(
        "TVM_CUDA_DRIVER_LIBRARY",
        "libcuda.so.1",
        "NVIDIA driver library could not be opened",
        "libm.so.6: not a usable CUDA driver library (missing cuInit",
        "Install the NVIDIA driver",
        "CUDA is not available",
        "CUDA",
    ),
    "metal": Driver(
        "TVM_METAL_OBJC_LIBRARY",
        "libobjc.A.dylib",
        "cannot open the Objective-C runtime",
        "libm.so.6: not an Objective-C runtime (missing objc_getClass",
        "runs on macOS 11 or newer",
        "Metal is not available",
        "Metal",
        fakes.metal_environment,
    ),
    "opencl": Driver(
        "TVM_OPENCL_LIBRARY",
        "libOpenCL.so.1",
        "no OpenCL ICD loader could be opened",
        "libm.so.6: not a usable OpenCL ICD loader (missing clGetPlatformIDs",
        "apt-get install ocl-icd-libopencl1",
        "OpenCL is not available",
        "OpenCL",
    ),
    "rocm": Driver(
        "TVM_ROCM_LIBRARY",
        "libamdhip64.so",
        "the HIP runtime library (libamdhip64.so) could not be opened",
        "libm.so.6: not a usable HIP runtime library (missing hipInit",
        "Install ROCm 6.0 or newer",
        "ROCm is not available",
        "ROCm",
        lambda: {"TVM_ROCM_LIBRARY": str(fakes.build("hip"))},
    ),
    "vulkan": Driver(
        "TVM_VULKAN_LIBRARY",
        "libvulkan.so.1",
        "libvulkan.so.1 could not be opened",
        "libm.so.6: not a Vulkan loader (no vkGetInstanceProcAddr)",
        "apt-get install libvulkan1 mesa-vulkan-drivers",
        "Vulkan is not available",
        "Vulkan",
    ),
    "webgpu": Driver(
        "TVM_WEBGPU_LIBRARY",
        "libwgpu_native.so",
        "no usable wgpu-native library",
        "libm.so.6: it does not export wgpuGetVersion",
        "pip install 'tvm-runtime-webgpu[wgpu]'",
        "WebGPU is not available",
        "WebGPU",
    ),
}


def add_artifact(backend: str) -> str:
    """The `add` kernel (c = a + b) apache-tvm 0.27 compiled for the backend's device."""
    return str(ARTIFACTS / backend / "add.so")
