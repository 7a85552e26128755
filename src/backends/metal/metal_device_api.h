/*
 * The Metal implementation of the core's device table (tvm_runtime/c_api.h): attributes,
 * buffers, copies, streams (command queues) and driver diagnostics.
 *
 * A tensor's `data` is the MTLBuffer object itself, as in apache-tvm's Metal runtime (kernels
 * bind it with setBuffer:, and DLPack producers on Metal hand out MTLBuffers the same way).
 */
#ifndef TVM_RUNTIME_BACKENDS_METAL_METAL_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_METAL_METAL_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <string>

#include "metal_runtime.h"

namespace tvm_runtime {
namespace metal {

class MetalDeviceAPI final : public backend::NumberedDevices<kDeviceTypeMetal, MetalRuntime> {
 public:
  TVM_RUNTIME_NUMBERED_DEVICES_OVERRIDES;
  TVM_RUNTIME_DEVICE_BACKEND_STREAM_OVERRIDES;
};

}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_METAL_DEVICE_API_H_
