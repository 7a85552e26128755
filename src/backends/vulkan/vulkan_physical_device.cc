#include "vulkan_physical_device.h"

#include <tvm/ffi/string.h>

#include <algorithm>
#include <cstring>

namespace tvm_runtime {
namespace vulkan {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::String;

std::vector<std::string> DeviceExtensions(const VkInstanceFunctions& fns, VkPhysicalDevice pd) {
  uint32_t n = 0;
  if (fns.EnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return {};
  std::vector<VkExtensionProperties> props(n);
  if (fns.EnumerateDeviceExtensionProperties(pd, nullptr, &n, props.data()) < 0) return {};
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n && i < props.size(); ++i) out.emplace_back(props[i].extensionName);
  return out;
}

// Prefers a compute-only family (a dedicated compute queue on discrete GPUs), else any family
// that can run compute shaders.
void SelectQueueFamily(const VkInstanceFunctions& fns, PhysicalDeviceInfo* info) {
  uint32_t n = 0;
  fns.GetPhysicalDeviceQueueFamilyProperties(info->handle, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  fns.GetPhysicalDeviceQueueFamilyProperties(info->handle, &n, families.data());
  int best_rank = -1;
  for (uint32_t i = 0; i < n; ++i) {
    const VkQueueFamilyProperties& f = families[i];
    if (!(f.queueFlags & VK_QUEUE_COMPUTE_BIT) || f.queueCount == 0) continue;
    int rank = (f.queueFlags & VK_QUEUE_GRAPHICS_BIT) ? 0 : 1;
    if (rank > best_rank) {
      best_rank = rank;
      info->queue_family = i;
      info->queue_flags = f.queueFlags;
      info->timestamp_valid_bits = f.timestampValidBits;
    }
  }
}

void QueryFeatures(const VkInstanceFunctions& fns, PhysicalDeviceInfo* info) {
  const uint32_t v = info->api_version;
  info->has_storage16 = v >= kVkApiVersion11 || info->HasExtension("VK_KHR_16bit_storage");
  info->has_storage8 = v >= kVkApiVersion12 || info->HasExtension("VK_KHR_8bit_storage");
  info->has_float16_int8 = v >= kVkApiVersion12 || info->HasExtension("VK_KHR_shader_float16_int8");
  info->has_integer_dot_product =
      v >= kVkApiVersion13 || info->HasExtension("VK_KHR_shader_integer_dot_product");
  if (fns.GetPhysicalDeviceFeatures2 == nullptr) {
    fns.GetPhysicalDeviceFeatures(info->handle, &info->features);
    info->has_storage16 = info->has_storage8 = info->has_float16_int8 = false;
    info->has_integer_dot_product = false;
    return;
  }
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  info->storage8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
  info->storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  info->float16_int8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{};
  dot.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES;
  void** tail = &features.pNext;
  if (info->has_storage8) Chain(&tail, &info->storage8);
  if (info->has_storage16) Chain(&tail, &info->storage16);
  if (info->has_float16_int8) Chain(&tail, &info->float16_int8);
  if (info->has_integer_dot_product) Chain(&tail, &dot);
  fns.GetPhysicalDeviceFeatures2(info->handle, &features);
  info->features = features.features;
  info->integer_dot_product = dot.shaderIntegerDotProduct != 0;
  // The copies live on in `info`; their pNext pointed into this frame.
  info->storage8.pNext = info->storage16.pNext = info->float16_int8.pNext = nullptr;
}

void QueryProperties(const VkInstanceFunctions& fns, PhysicalDeviceInfo* info) {
  fns.GetPhysicalDeviceProperties(info->handle, &info->props);
  if (fns.GetPhysicalDeviceProperties2 == nullptr) return;
  VkPhysicalDeviceProperties2 props{};
  props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  void** tail = &props.pNext;
  const bool has_subgroup = info->api_version >= kVkApiVersion11;
  info->has_driver_properties =
      info->api_version >= kVkApiVersion12 || info->HasExtension("VK_KHR_driver_properties");
  if (has_subgroup) Chain(&tail, &subgroup);
  if (info->has_driver_properties) Chain(&tail, &driver);
  fns.GetPhysicalDeviceProperties2(info->handle, &props);
  if (has_subgroup) {
    info->subgroup_size = std::max<uint32_t>(subgroup.subgroupSize, 1);
    info->subgroup_stages = subgroup.supportedStages;
    info->subgroup_operations = subgroup.supportedOperations;
  }
  if (info->has_driver_properties) {
    info->driver_name.assign(driver.driverName,
                             strnlen(driver.driverName, sizeof(driver.driverName)));
    info->driver_info.assign(driver.driverInfo,
                             strnlen(driver.driverInfo, sizeof(driver.driverInfo)));
    info->conformance = driver.conformanceVersion;
  }
}

}  // namespace

bool PhysicalDeviceInfo::HasExtension(const char* name) const {
  return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
}

const char* PhysicalDeviceInfo::TypeName() const {
  switch (props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

int PhysicalDeviceInfo::Rank() const {
  switch (props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

uint32_t PhysicalDeviceInfo::TargetApiVersion() const {
  uint32_t v = props.apiVersion;
  if (has_driver_properties) {
    // Shaders should only use what passed the conformance tests of this driver.
    uint32_t major = VkApiVersionMajor(v), minor = VkApiVersionMinor(v);
    if (major > conformance.major || (major == conformance.major && minor > conformance.minor)) {
      v = VkMakeApiVersion(conformance.major, conformance.minor, 0);
    }
  }
  return v;
}

uint32_t PhysicalDeviceInfo::MaxSpirvVersion() const {
  // "Versions and Formats" of the Vulkan specification.
  const uint32_t v = TargetApiVersion();
  if (v >= kVkApiVersion13) return 0x10600;
  if (v >= kVkApiVersion12) return 0x10500;
  if (HasExtension("VK_KHR_spirv_1_4")) return 0x10400;
  if (v >= kVkApiVersion11) return 0x10300;
  return 0x10000;
}

uint64_t PhysicalDeviceInfo::DeviceLocalBytes() const {
  uint64_t total = 0;
  for (uint32_t i = 0; i < memory.memoryHeapCount && i < kVkMaxMemoryHeaps; ++i) {
    if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      total += memory.memoryHeaps[i].size;
    }
  }
  return total;
}

PhysicalDeviceInfo DescribePhysicalDevice(const VkInstanceFunctions& fns, VkPhysicalDevice handle,
                                          uint32_t instance_api_version) {
  PhysicalDeviceInfo info;
  info.handle = handle;
  fns.GetPhysicalDeviceProperties(handle, &info.props);
  info.api_version = std::min(instance_api_version, info.props.apiVersion);
  info.extensions = DeviceExtensions(fns, handle);
  QueryProperties(fns, &info);
  QueryFeatures(fns, &info);
  fns.GetPhysicalDeviceMemoryProperties(handle, &info.memory);
  SelectQueueFamily(fns, &info);
  return info;
}

Any TargetProperty(const PhysicalDeviceInfo& info, const std::string& key) {
  const VkPhysicalDeviceLimits& limits = info.props.limits;
  auto flag = [](VkBool32 b) { return b != 0; };
  auto i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
  // Feature support, as apache-tvm's Vulkan codegen reads it.
  if (key == "supports_float16")
    return info.has_float16_int8 && flag(info.float16_int8.shaderFloat16);
  if (key == "supports_float32") return true;
  if (key == "supports_float64") return flag(info.features.shaderFloat64);
  if (key == "supports_int8") return info.has_float16_int8 && flag(info.float16_int8.shaderInt8);
  if (key == "supports_int16") return flag(info.features.shaderInt16);
  if (key == "supports_int32") return true;
  if (key == "supports_int64") return flag(info.features.shaderInt64);
  if (key == "supports_8bit_buffer") {
    return info.has_storage8 && flag(info.storage8.storageBuffer8BitAccess);
  }
  if (key == "supports_16bit_buffer") {
    return info.has_storage16 && flag(info.storage16.storageBuffer16BitAccess);
  }
  if (key == "supports_storage_buffer_storage_class") {
    return info.api_version >= kVkApiVersion11 ||
           info.HasExtension("VK_KHR_storage_buffer_storage_class");
  }
  if (key == "supports_push_descriptor") return info.HasExtension("VK_KHR_push_descriptor");
  if (key == "supports_dedicated_allocation") {
    return info.api_version >= kVkApiVersion11 ||
           (info.HasExtension("VK_KHR_dedicated_allocation") &&
            info.HasExtension("VK_KHR_get_memory_requirements2"));
  }
  if (key == "supports_integer_dot_product") return info.integer_dot_product;
  if (key == "supports_cooperative_matrix") return info.HasExtension("VK_KHR_cooperative_matrix");
  if (key == "supported_subgroup_operations") {
    return i64((info.subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) ? info.subgroup_operations : 0);
  }
  // Limits.
  if (key == "max_num_threads" || key == "max_threads_per_block") {
    return i64(limits.maxComputeWorkGroupInvocations);
  }
  if (key == "thread_warp_size") return i64(info.subgroup_size);
  if (key == "max_block_size_x") return i64(limits.maxComputeWorkGroupSize[0]);
  if (key == "max_block_size_y") return i64(limits.maxComputeWorkGroupSize[1]);
  if (key == "max_block_size_z") return i64(limits.maxComputeWorkGroupSize[2]);
  if (key == "max_push_constants_size") return i64(limits.maxPushConstantsSize);
  if (key == "max_uniform_buffer_range") return i64(limits.maxUniformBufferRange);
  if (key == "max_storage_buffer_range") return i64(limits.maxStorageBufferRange);
  if (key == "max_per_stage_descriptor_storage_buffer") {
    return i64(limits.maxPerStageDescriptorStorageBuffers);
  }
  if (key == "max_shared_memory_per_block") return i64(limits.maxComputeSharedMemorySize);
  // Identity.
  if (key == "device_name") return String(info.props.deviceName);
  if (key == "device_type") return String(info.TypeName());
  if (key == "driver_name") return String(info.driver_name);
  if (key == "driver_version") return i64(info.props.driverVersion);
  if (key == "vulkan_api_version") return i64(info.TargetApiVersion());
  if (key == "max_spirv_version") return i64(info.MaxSpirvVersion());
  return Any();
}

}  // namespace vulkan
}  // namespace tvm_runtime
