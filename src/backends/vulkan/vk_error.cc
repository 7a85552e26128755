#include "vk_error.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

// Hints: what the code usually means for a compute runtime.
const backend::StatusName<VkResult> kResults[] = {
    {VK_SUCCESS, "VK_SUCCESS", nullptr},
    {VK_NOT_READY, "VK_NOT_READY", nullptr},
    {VK_TIMEOUT, "VK_TIMEOUT", nullptr},
    {VK_INCOMPLETE, "VK_INCOMPLETE", nullptr},
    {VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY", "the host ran out of memory"},
    {VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY",
     "the device ran out of memory; free tensors or use smaller batches"},
    {VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED",
     "the driver could not initialize"},
    {VK_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST",
     "the device was lost (driver reset or a kernel faulted); restart the process"},
    {VK_ERROR_MEMORY_MAP_FAILED, "VK_ERROR_MEMORY_MAP_FAILED", nullptr},
    {VK_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT", nullptr},
    {VK_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT", nullptr},
    {VK_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT", nullptr},
    {VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER",
     "no installed Vulkan driver (ICD) is usable"},
    {VK_ERROR_TOO_MANY_OBJECTS, "VK_ERROR_TOO_MANY_OBJECTS", nullptr},
    {VK_ERROR_FORMAT_NOT_SUPPORTED, "VK_ERROR_FORMAT_NOT_SUPPORTED", nullptr},
    {VK_ERROR_FRAGMENTED_POOL, "VK_ERROR_FRAGMENTED_POOL", nullptr},
    {VK_ERROR_UNKNOWN, "VK_ERROR_UNKNOWN", nullptr},
    {VK_ERROR_OUT_OF_POOL_MEMORY, "VK_ERROR_OUT_OF_POOL_MEMORY", nullptr},
    {VK_ERROR_INVALID_EXTERNAL_HANDLE, "VK_ERROR_INVALID_EXTERNAL_HANDLE", nullptr},
    {VK_ERROR_FRAGMENTATION, "VK_ERROR_FRAGMENTATION", nullptr},
    {VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS, "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS", nullptr},
    {VK_PIPELINE_COMPILE_REQUIRED, "VK_PIPELINE_COMPILE_REQUIRED", nullptr},
    {VK_ERROR_INVALID_SHADER_NV, "VK_ERROR_INVALID_SHADER_NV",
     "the driver rejected the SPIR-V shader"},
};

}  // namespace

const backend::StatusName<VkResult>* VkStatusTraits::Names(size_t* count) {
  *count = sizeof(kResults) / sizeof(kResults[0]);
  return kResults;
}

}  // namespace vulkan
}  // namespace tvm_runtime
