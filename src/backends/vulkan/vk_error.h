/*
 * VkResult codes as readable exceptions (backend/status_codes.h does the work; this backend
 * only provides the table of names and hints, in vk_error.cc).
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VK_ERROR_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VK_ERROR_H_

#include <tvm_runtime/backend/status_codes.h>

#include <cstddef>
#include <string>

#include "vk_api.h"

namespace tvm_runtime {
namespace vulkan {

struct VkStatusTraits {
  using Code = VkResult;
  static constexpr Code kSuccess = VK_SUCCESS;
  static constexpr const char* kApi = "Vulkan";
  static constexpr const char* kUnknownPrefix = "VkResult ";
  static const backend::StatusName<VkResult>* Names(size_t* count);
};
using VkStatus = backend::VendorStatus<VkStatusTraits>;

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY (-2): <hint>"; unknown codes come back as "VkResult 1234". */
inline std::string VkResultString(VkResult result) { return VkStatus::Describe(result); }

/* Throws RuntimeError "Vulkan error VK_... (-N) in <what>". */
[[noreturn]] inline void ThrowVkError(VkResult result, const std::string& what,
                                      backend::ThrowSite site = backend::ThrowSite()) {
  VkStatus::Throw(result, what, site);
}

/* ThrowVkError unless result == VK_SUCCESS. */
inline void CheckVk(VkResult result, const char* what,
                    backend::ThrowSite site = backend::ThrowSite()) {
  VkStatus::Check(result, what, site);
}

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VK_ERROR_H_
