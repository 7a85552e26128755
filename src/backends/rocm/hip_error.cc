#include "hip_error.h"

#include "hip_library.h"

namespace tvm_runtime {
namespace rocm {

// The runtime's own text says what happened; the hint says what to do about it.
const char* HipStatusTraits::Hint(hipError_t result) {
  switch (result) {
    case hipErrorOutOfMemory:
      return "free device memory (delete unused tensors) or use smaller inputs";
    case hipErrorInsufficientDriver:
      return "the amdgpu kernel driver is older than this HIP runtime; upgrade the driver "
             "(amdgpu-dkms) or use a ROCm release it supports";
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidKernelFile:
    case hipErrorInvalidImage:
      return "the code object was not built for this GPU or this ROCm release cannot load it; "
             "re-export the model with tvm.target.Target({\"kind\": \"rocm\", \"mcpu\": <the "
             "GPU's gfx arch>}) (python -m tvm.backend shows it)";
    default:
      return nullptr;
  }
}

std::string HipStatusTraits::Describe(hipError_t result) {
  const HipLibrary& lib = GetHipLibrary();
  const char* name = lib.api != nullptr ? lib.api->GetErrorName(result) : nullptr;
  const char* text = lib.api != nullptr ? lib.api->GetErrorString(result) : nullptr;
  std::string out = name != nullptr ? name : "HIP error " + std::to_string(result);
  if (text != nullptr && text[0] != '\0') out += std::string(" (") + text + ")";
  return out;
}

}  // namespace rocm
}  // namespace tvm_runtime
