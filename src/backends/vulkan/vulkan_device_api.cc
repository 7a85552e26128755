#include "vulkan_device_api.h"

#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/device_info_util.h>

#include <vector>

#include "vulkan_device.h"
#include "vulkan_memory.h"
#include "vulkan_runtime.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::String;

VulkanRuntime& Runtime() { return VulkanRuntime::Global(); }

std::string VersionString(uint32_t v) {
  return std::to_string(VkApiVersionMajor(v)) + "." + std::to_string(VkApiVersionMinor(v)) + "." +
         std::to_string(VkApiVersionPatch(v));
}

}  // namespace

void VulkanDeviceAPI::SelectDevice(int32_t device_id) {
  Runtime().Info(device_id);  // validates, and initializes Vulkan on first use
}

Any VulkanDeviceAPI::DeviceAttr(int32_t device_id, int32_t kind) {
  VulkanRuntime& rt = Runtime();
  const PhysicalDeviceInfo& d = rt.Info(device_id);
  const VkPhysicalDeviceLimits& limits = d.props.limits;
  switch (kind) {
    case kTVMRuntimeAttrMaxThreadsPerBlock:
      return static_cast<int64_t>(limits.maxComputeWorkGroupInvocations);
    case kTVMRuntimeAttrWarpSize:
      return static_cast<int64_t>(d.subgroup_size);
    case kTVMRuntimeAttrMaxSharedMemoryPerBlock:
      return static_cast<int64_t>(limits.maxComputeSharedMemorySize);
    case kTVMRuntimeAttrComputeVersion:
      return String(VersionString(d.TargetApiVersion()));
    case kTVMRuntimeAttrDeviceName:
      return String(d.props.deviceName);
    case kTVMRuntimeAttrMaxThreadDimensions:
      return String(backend::JsonIntList(limits.maxComputeWorkGroupSize, 3));
    case kTVMRuntimeAttrApiVersion:
      return static_cast<int64_t>(kVkHeaderVersion);
    case kTVMRuntimeAttrDriverVersion:
      return String(VersionString(d.props.driverVersion));
    case kTVMRuntimeAttrTotalGlobalMemory:
      return static_cast<int64_t>(d.DeviceLocalBytes());
    default:
      // Clock rate, multiprocessor count, registers, L2 size and free memory have no portable
      // Vulkan query; apache-tvm leaves them unset too.
      return Any();
  }
}

void* VulkanDeviceAPI::AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                                 DLDataType type_hint) {
  return Runtime().Device(device_id).Allocate(nbytes, alignment);
}

Any VulkanDeviceAPI::DeviceTargetProperty(int32_t device_id, const std::string& key) {
  VulkanRuntime& rt = Runtime();
  return TargetProperty(rt.Info(device_id), key);
}

}  // namespace vulkan
}  // namespace tvm_runtime
