/*
 * The Vulkan implementation of the core's device table (tvm_runtime/c_api.h): attributes,
 * buffers, copies, synchronization, target properties and driver diagnostics.  Vulkan has one
 * queue per device here, so there are no extra streams (as in apache-tvm's Vulkan runtime).
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/buffer_devices.h>

#include <string>

#include "vulkan_device.h"
#include "vulkan_memory.h"
#include "vulkan_runtime.h"

namespace tvm_runtime {
namespace vulkan {

class VulkanDeviceAPI final
    : public backend::BufferDevices<kDeviceTypeVulkan, VulkanRuntime, BufferDescriptor> {
 public:
  VulkanDeviceAPI() : BufferDevices("Vulkan") {}
  void* AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                  DLDataType type_hint) override;
  TVM_RUNTIME_NUMBERED_DEVICES_QUERY_OVERRIDES;
};

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_API_H_
