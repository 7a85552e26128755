/*
 * Turning VkResult codes into readable exceptions.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VK_ERROR_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VK_ERROR_H_

#include <string>

#include "vk_api.h"

namespace tvm_runtime {
namespace vulkan {

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)"; unknown codes come back as "VkResult 1234". */
std::string VkResultString(VkResult result);

/* Throws RuntimeError "Vulkan error VK_... (-N) in <what>". */
[[noreturn]] void ThrowVkError(VkResult result, const std::string& what);

inline void CheckVk(VkResult result, const char* what) {
  if (result != VK_SUCCESS) ThrowVkError(result, what);
}

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VK_ERROR_H_
