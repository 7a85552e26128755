/*
 * The Vulkan implementation of the core's device table (tvm_runtime/c_api.h): attributes,
 * buffers, copies, synchronization, target properties and driver diagnostics.  Vulkan has one
 * queue per device here, so there are no extra streams (as in apache-tvm's Vulkan runtime).
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>

#include <string>

namespace tvm_runtime {
namespace vulkan {

class VulkanDeviceAPI final : public backend::DeviceBackend {
 public:
  TVM_RUNTIME_DEVICE_BACKEND_OVERRIDES;
  ::tvm::ffi::Any GetTargetProperty(int32_t device_id, const std::string& key) override;
  std::string DriverStatus() override;
};

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_API_H_
