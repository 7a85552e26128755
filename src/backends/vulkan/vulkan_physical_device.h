/*
 * What the backend knows about one physical device: properties, limits, the optional features
 * kernels may need, its compute queue family and memory types, plus the target properties
 * apache-tvm's Vulkan target detection asks for (device_api.vulkan.get_target_property).
 * Everything here is queried once, when devices are enumerated; no logical device is needed.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_PHYSICAL_DEVICE_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_PHYSICAL_DEVICE_H_

#include <tvm/ffi/any.h>

#include <string>
#include <vector>

#include "vk_api.h"
#include "vk_library.h"

namespace tvm_runtime {
namespace vulkan {

constexpr uint32_t kNoQueueFamily = ~0U;

struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = nullptr;
  VkPhysicalDeviceProperties props{};
  // Version the backend may use on this device: min(instance version, device version).
  uint32_t api_version = kVkApiVersion10;
  std::vector<std::string> extensions;

  // Optional shader features; a feature struct is valid (for queries and for enabling at
  // device creation) when its extension is present or its Vulkan version is core.
  VkPhysicalDeviceFeatures features{};
  bool has_storage8 = false, has_storage16 = false, has_float16_int8 = false;
  bool has_integer_dot_product = false;
  VkPhysicalDevice8BitStorageFeatures storage8{};
  VkPhysicalDevice16BitStorageFeatures storage16{};
  VkPhysicalDeviceShaderFloat16Int8Features float16_int8{};
  bool integer_dot_product = false;

  uint32_t subgroup_size = 1;
  VkFlags subgroup_stages = 0;
  VkFlags subgroup_operations = 0;

  bool has_driver_properties = false;
  std::string driver_name;
  std::string driver_info;
  VkConformanceVersion conformance{};

  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t queue_family = kNoQueueFamily;  // compute queue family, kNoQueueFamily if none
  VkFlags queue_flags = 0;
  uint32_t timestamp_valid_bits = 0;  // of that family's queues; 0: no timestamps

  bool HasExtension(const char* name) const;
  /* "discrete", "integrated", "virtual", "cpu" or "other" (apache-tvm's names). */
  const char* TypeName() const;
  /* Ordering key: discrete GPUs first, CPUs last (so device 0 is the fastest). */
  int Rank() const;
  /* The API version apache-tvm targets: the device's, capped at its conformance version. */
  uint32_t TargetApiVersion() const;
  /* Highest SPIR-V version the device accepts, encoded as in the SPIR-V header (0x00MMmm00). */
  uint32_t MaxSpirvVersion() const;
  uint64_t DeviceLocalBytes() const;
};

/* Queries everything about `handle`; never creates a logical device. */
PhysicalDeviceInfo DescribePhysicalDevice(const VkInstanceFunctions& fns, VkPhysicalDevice handle,
                                          uint32_t instance_api_version);

/* The value apache-tvm's `device_api.vulkan.get_target_property` returns for `key`, or None. */
::tvm::ffi::Any TargetProperty(const PhysicalDeviceInfo& info, const std::string& key);

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_PHYSICAL_DEVICE_H_
