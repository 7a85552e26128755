/*
 * The CUDA implementations of the core's device table (tvm_runtime/c_api.h): kDLCUDA device
 * memory, copies, streams and attributes, and kDLCUDAHost page-locked host memory.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <string>

#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

class CudaDeviceAPI final : public backend::NumberedDevices<kDeviceTypeCUDA, CudaRuntime> {
 public:
  TVM_RUNTIME_NUMBERED_DEVICES_OVERRIDES;
  TVM_RUNTIME_DEVICE_BACKEND_STREAM_OVERRIDES;
  uint64_t DeviceFlags() const override { return TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC; }
};

/* kDLCUDAHost: pinned host memory, which the GPU can copy from and to asynchronously.
 *
 * Synchronization (as apache-tvm's cuda_host): a device copy into or out of pinned memory is
 * queued on the GPU's stream and may still be running when CopyData returns.  StreamSync of
 * cuda_host waits for it: with no stream, for the current stream of every CUDA device in use;
 * with a stream, for that stream.  Host-side copies of pinned memory (numpy(), copyfrom from
 * the CPU) wait the same way first, so they never see a copy in flight. */
class CudaHostDeviceAPI final : public backend::DeviceBackend {
 public:
  TVM_RUNTIME_DEVICE_BACKEND_OVERRIDES;
  std::string DriverStatus() override;
  uint64_t DeviceFlags() const override { return TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC; }
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_DEVICE_API_H_
