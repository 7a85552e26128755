#include "vulkan_device_api.h"

#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/device_info_util.h>

#include <vector>

#include "vulkan_device.h"
#include "vulkan_memory.h"
#include "vulkan_runtime.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

using backend::CopyDirection;
using ::tvm::ffi::Any;
using ::tvm::ffi::String;

VulkanRuntime& Runtime() { return VulkanRuntime::Global(); }

BufferDescriptor* AsBuffer(const void* data) {
  return static_cast<BufferDescriptor*>(const_cast<void*>(data));
}

void CheckRange(const BufferDescriptor* buf, uint64_t offset, uint64_t nbytes, const char* side) {
  backend::CheckCopyRange(buf, buf != nullptr ? buf->size : 0, offset, nbytes, side, "Vulkan");
}

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

void VulkanDeviceAPI::FreeData(int32_t device_id, void* data) {
  BufferDescriptor* buf = AsBuffer(data);
  // After process exit started, the driver may be half torn down: leak instead.
  if (buf == nullptr || Runtime().shut_down()) return;
  Runtime().Device(buf->device_id).Free(buf);
}

void VulkanDeviceAPI::CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                               uint64_t nbytes, DLDevice dev_from, DLDevice dev_to,
                               DLDataType type_hint, void* stream) {
  CopyDirection dir = backend::ClassifyCopy(dev_from, dev_to, kDeviceTypeVulkan, "Vulkan");
  if (nbytes == 0) return;
  VulkanRuntime& rt = Runtime();
  switch (dir) {
    case CopyDirection::kHostToDevice: {
      BufferDescriptor* dst = AsBuffer(to);
      CheckRange(dst, to_offset, nbytes, "destination");
      rt.Device(dst->device_id)
          .CopyFromHost(static_cast<const char*>(from) + from_offset, dst, to_offset, nbytes);
      return;
    }
    case CopyDirection::kDeviceToHost: {
      BufferDescriptor* src = AsBuffer(from);
      CheckRange(src, from_offset, nbytes, "source");
      rt.Device(src->device_id)
          .CopyToHost(src, from_offset, static_cast<char*>(to) + to_offset, nbytes);
      return;
    }
    case CopyDirection::kDeviceToDevice: {
      BufferDescriptor* src = AsBuffer(from);
      BufferDescriptor* dst = AsBuffer(to);
      CheckRange(src, from_offset, nbytes, "source");
      CheckRange(dst, to_offset, nbytes, "destination");
      if (src->device_id == dst->device_id) {
        rt.Device(src->device_id).CopyOnDevice(src, from_offset, dst, to_offset, nbytes);
      } else {
        // Two devices share no memory: bounce through the host.
        std::vector<char> bounce(nbytes);
        rt.Device(src->device_id).CopyToHost(src, from_offset, bounce.data(), nbytes);
        rt.Device(dst->device_id).CopyFromHost(bounce.data(), dst, to_offset, nbytes);
      }
      return;
    }
  }
}

void VulkanDeviceAPI::StreamSync(int32_t device_id, void* stream) {
  VulkanRuntime& rt = Runtime();
  rt.Info(device_id);  // a missing device is an error, as for every other call
  // A device that was never used has nothing to wait for: do not create it just to sync.
  if (VulkanDevice* d = rt.PeekDevice(device_id)) d->Sync();
}

Any VulkanDeviceAPI::DeviceTargetProperty(int32_t device_id, const std::string& key) {
  VulkanRuntime& rt = Runtime();
  return TargetProperty(rt.Info(device_id), key);
}

}  // namespace vulkan
}  // namespace tvm_runtime
