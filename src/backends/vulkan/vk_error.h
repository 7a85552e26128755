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

TVM_RUNTIME_STATUS_TABLE(VkStatus, VkResult, VK_SUCCESS, "Vulkan", "VkResult ");

/* VkResultString: "VK_ERROR_OUT_OF_DEVICE_MEMORY (-2): <hint>"; unknown codes come back as
 * "VkResult 1234".  ThrowVkError: RuntimeError "Vulkan error VK_... (-N) in <what>"; CheckVk:
 * unless VK_SUCCESS. */
TVM_RUNTIME_STATUS_FUNCTIONS(VkStatus, VkResultString, ThrowVkError, CheckVk);

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VK_ERROR_H_
