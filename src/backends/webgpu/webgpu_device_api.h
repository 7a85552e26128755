/*
 * The WebGPU implementation of the core's device table (tvm_runtime/c_api.h): attributes,
 * buffers, copies, synchronization and driver diagnostics.  WebGPU has one queue per device,
 * so there are no extra streams.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/buffer_devices.h>

#include <string>

#include "webgpu_device.h"
#include "webgpu_runtime.h"

namespace tvm_runtime {
namespace webgpu {

class WebGPUDeviceAPI final
    : public backend::BufferDevices<kDeviceTypeWebGPU, WebGPURuntime, WebGPUBuffer> {
 public:
  WebGPUDeviceAPI() : BufferDevices("WebGPU") {}
  void* AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                  DLDataType type_hint) override;
  TVM_RUNTIME_NUMBERED_DEVICES_QUERY_OVERRIDES;
};

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_API_H_
