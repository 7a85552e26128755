/*
 * Resolving Vulkan entry points.  libvulkan.so.1 (the Khronos loader) is dlopen'ed on first
 * device use, never at import or registration, so the backend loads on machines without Vulkan
 * and can say exactly what is missing.  Only vkGetInstanceProcAddr is taken with dlsym; every
 * other function comes through it (global and instance level) or through vkGetDeviceProcAddr
 * (device level, which skips the loader's dispatch trampoline on the launch path).
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VK_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VK_LIBRARY_H_

#include <string>

#include "vk_api.h"

namespace tvm_runtime {
namespace vulkan {

/* Environment variable naming the loader library to open instead of the default search. */
constexpr const char* kLibraryEnvVar = "TVM_VULKAN_LIBRARY";

// Each list is X(name, required); name is the entry point without its "vk" prefix.
#define TVM_VK_GLOBAL_FUNCTIONS(X)              \
  X(EnumerateInstanceVersion, false)            \
  X(EnumerateInstanceExtensionProperties, true) \
  X(EnumerateInstanceLayerProperties, true)     \
  X(CreateInstance, true)

#define TVM_VK_INSTANCE_FUNCTIONS(X)              \
  X(DestroyInstance, true)                        \
  X(EnumeratePhysicalDevices, true)               \
  X(GetPhysicalDeviceProperties, true)            \
  X(GetPhysicalDeviceFeatures, true)              \
  X(GetPhysicalDeviceQueueFamilyProperties, true) \
  X(GetPhysicalDeviceMemoryProperties, true)      \
  X(EnumerateDeviceExtensionProperties, true)     \
  X(CreateDevice, true)                           \
  X(GetDeviceProcAddr, true)                      \
  X(GetPhysicalDeviceProperties2, false)          \
  X(GetPhysicalDeviceFeatures2, false)            \
  X(GetPhysicalDeviceMemoryProperties2, false)    \
  X(CreateDebugUtilsMessengerEXT, false)

#define TVM_VK_DEVICE_FUNCTIONS(X)     \
  X(DestroyDevice, true)               \
  X(GetDeviceQueue, true)              \
  X(DeviceWaitIdle, true)              \
  X(CreateBuffer, true)                \
  X(DestroyBuffer, true)               \
  X(GetBufferMemoryRequirements, true) \
  X(AllocateMemory, true)              \
  X(FreeMemory, true)                  \
  X(BindBufferMemory, true)            \
  X(MapMemory, true)                   \
  X(UnmapMemory, true)                 \
  X(CreateCommandPool, true)           \
  X(DestroyCommandPool, true)          \
  X(ResetCommandPool, true)            \
  X(AllocateCommandBuffers, true)      \
  X(BeginCommandBuffer, true)          \
  X(EndCommandBuffer, true)            \
  X(CreateFence, true)                 \
  X(DestroyFence, true)                \
  X(ResetFences, true)                 \
  X(WaitForFences, true)               \
  X(QueueSubmit, true)                 \
  X(CreateShaderModule, true)          \
  X(DestroyShaderModule, true)         \
  X(CreateDescriptorSetLayout, true)   \
  X(DestroyDescriptorSetLayout, true)  \
  X(CreatePipelineLayout, true)        \
  X(DestroyPipelineLayout, true)       \
  X(CreateComputePipelines, true)      \
  X(CreatePipelineCache, false)        \
  X(DestroyPipelineCache, false)       \
  X(GetPipelineCacheData, false)       \
  X(DestroyPipeline, true)             \
  X(CreateDescriptorPool, true)        \
  X(DestroyDescriptorPool, true)       \
  X(ResetDescriptorPool, true)         \
  X(AllocateDescriptorSets, true)      \
  X(UpdateDescriptorSets, true)        \
  X(CmdBindPipeline, true)             \
  X(CmdBindDescriptorSets, true)       \
  X(CmdPushConstants, true)            \
  X(CmdDispatch, true)                 \
  X(CmdPipelineBarrier, true)          \
  X(CmdCopyBuffer, true)               \
  X(CmdPushDescriptorSetKHR, false)    \
  X(CreateQueryPool, false)            \
  X(DestroyQueryPool, false)           \
  X(GetQueryPoolResults, false)        \
  X(CmdResetQueryPool, false)          \
  X(CmdWriteTimestamp, false)

#define TVM_VK_DECLARE_POINTER(name, required) PFN_vk##name name = nullptr;

struct VkGlobalFunctions {
  PFN_vkGetInstanceProcAddr GetInstanceProcAddr = nullptr;
  TVM_VK_GLOBAL_FUNCTIONS(TVM_VK_DECLARE_POINTER)
};

struct VkInstanceFunctions {
  TVM_VK_INSTANCE_FUNCTIONS(TVM_VK_DECLARE_POINTER)
};

struct VkDeviceFunctions {
  TVM_VK_DEVICE_FUNCTIONS(TVM_VK_DECLARE_POINTER)
};

#undef TVM_VK_DECLARE_POINTER

struct VkLibrary {
  const VkGlobalFunctions* fns = nullptr;  // null when loading failed
  std::string path;                        // the loader library that was opened
  std::string failure;                     // why fns is null: what was tried and how to fix it
};

/* Opens the loader on the first call (thread-safe) and returns the same result afterwards.
 * Candidates: $TVM_VULKAN_LIBRARY alone if set, else libvulkan.so.1 then libvulkan.so, each from
 * $CONDA_PREFIX/lib first when that is set (backend/vendor_library.h). */
const VkLibrary& GetVkLibrary();

/* Resolves instance-level functions (the *2 queries fall back to their KHR spelling on a 1.0
 * instance); throws RuntimeError if a required one is missing. */
VkInstanceFunctions LoadInstanceFunctions(const VkGlobalFunctions& global, VkInstance instance);

/* Resolves device-level functions; throws RuntimeError if a required one is missing. */
VkDeviceFunctions LoadDeviceFunctions(const VkInstanceFunctions& instance, VkDevice device);

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VK_LIBRARY_H_
