"""What the prepared GPU check runs, and how long each phase may take (seconds).

The whole check must end well inside the device tool's 10-minute command limit (target: 8 minutes
including installation), so the most valuable phase runs first and every phase is bounded.
"""

from __future__ import annotations

# Every test of the suite that touches CUDA: the GPU-only ones (they skip without a device) and
# the fake-driver ones, which also run there as a check of the fakes against a real machine.
CUDA_TESTS = [
    "tests/cuda",
    "tests/byoc/test_cuda_byoc_gpu.py",
    "tests/byoc/test_cublas_json.py",
    "tests/byoc/test_cudnn_json.py",
    "tests/core/test_target_detect.py::test_cuda_detects_or_says_why",
    "tests/faults/test_fault_kernel_build.py",
    # From the suite every backend gets (tests/conformance): CUDA's attributes and copies, which
    # run only where there is a GPU.
    "tests/conformance/test_device.py::test_attributes_and_copy_matrix[cuda]",
]

# The other GPU backends on NVIDIA's drivers (OpenCL ICD, Vulkan ICD; WebGPU through Vulkan).
OTHER_GPU_TESTS = ["tests/opencl", "tests/vulkan", "tests/webgpu"]

# Measured on the H200 (docs/gpu-check-results.md): the CUDA tests take ~130 s with pytest-xdist;
# the benchmark needs more than 80 s once apache-tvm compiles its kernels with NVRTC in every
# worker; OpenCL + Vulkan did not finish in 100 s serially (they run in parallel now too).
PHASE_SECONDS = {"cuda": 180, "bench": 180, "other": 120}
