/*
 * The ROCm implementations of the core's device table (tvm_runtime/c_api.h): kDLROCM device
 * memory, copies, streams and attributes, and kDLROCMHost page-locked host memory.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_ROCM_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_ROCM_ROCM_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <string>

#include "rocm_runtime.h"

namespace tvm_runtime {
namespace rocm {

class RocmDeviceAPI final : public backend::NumberedDevices<kDeviceTypeROCM, RocmRuntime> {
 public:
  TVM_RUNTIME_NUMBERED_DEVICES_OVERRIDES;
  TVM_RUNTIME_DEVICE_BACKEND_STREAM_OVERRIDES;
  uint64_t DeviceFlags() const override { return TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC; }
};

/* kDLROCMHost: pinned host memory, which the GPU copies from and to asynchronously.
 *
 * Synchronization (as apache-tvm's cuda_host): a device copy into or out of pinned memory is
 * queued on the GPU's stream and may still be running when CopyData returns.  StreamSync of
 * rocm_host waits for it: with no stream, for the current stream of every ROCm device; with a
 * stream, for that stream.  Host-side copies of pinned memory (numpy(), copyfrom from the CPU)
 * wait the same way first, so they never see a copy in flight. */
class RocmHostDeviceAPI final : public backend::DeviceBackend {
 public:
  TVM_RUNTIME_DEVICE_BACKEND_OVERRIDES;
  std::string DriverStatus() override;
  uint64_t DeviceFlags() const override { return TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC; }
};

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_ROCM_DEVICE_API_H_
