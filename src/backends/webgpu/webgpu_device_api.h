/*
 * The WebGPU implementation of the core's device table (tvm_runtime/c_api.h): attributes,
 * buffers, copies, synchronization and driver diagnostics.  WebGPU has one queue per device,
 * so there are no extra streams.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>

#include <string>

namespace tvm_runtime {
namespace webgpu {

class WebGPUDeviceAPI final : public backend::DeviceBackend {
 public:
  TVM_RUNTIME_DEVICE_BACKEND_OVERRIDES;
  ::tvm::ffi::Any GetTargetProperty(int32_t device_id, const std::string& key) override;
  std::string DriverStatus() override;
};

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_API_H_
