#include "cuda_error.h"

#include "cuda_library.h"

namespace tvm_runtime {
namespace cuda {

// The driver's own text says what happened; the hint says what to do about it.
const char* CuStatusTraits::Hint(CUresult result) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "free device memory (delete unused tensors) or use smaller inputs";
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return "the installed NVIDIA driver is too old for this code; upgrade the driver";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return "the kernel-mode NVIDIA driver and libcuda.so.1 come from different driver versions; "
             "reinstall the driver (and reboot)";
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return "the kernel image was not built for this GPU's architecture; re-export the model "
             "for this GPU, or ship CUDA source or PTX";
    case CUDA_ERROR_INVALID_PTX:
      return "the PTX could not be compiled for this GPU (see the JIT log: e.g. it targets a newer "
             "or another architecture); re-export the model for this GPU, or ship CUDA source";
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return "the PTX was produced by a newer compiler than this driver supports; upgrade the "
             "driver, or compile to cubin for this GPU";
    case CUDA_ERROR_STUB_LIBRARY:
      return "the CUDA toolkit's stub libcuda.so was loaded instead of the NVIDIA driver; remove "
             "the toolkit's stubs directory from LD_LIBRARY_PATH";
    default:
      return nullptr;
  }
}

std::string CuStatusTraits::Describe(CUresult result) {
  const CudaLibrary& driver = GetCudaLibrary();
  const char* name = nullptr;
  const char* text = nullptr;
  if (driver.api != nullptr) {
    if (driver.api->GetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
    if (driver.api->GetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  }
  std::string out = name != nullptr ? name : "CUDA error " + std::to_string(result);
  if (text != nullptr) out += std::string(" (") + text + ")";
  return out;
}

}  // namespace cuda
}  // namespace tvm_runtime
