/*
 * The ROCm implementations of the core's device table (tvm_runtime/c_api.h): kDLROCM device
 * memory, copies, streams and attributes, and kDLROCMHost page-locked host memory.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_ROCM_DEVICE_API_H_
#define TVM_RUNTIME_BACKENDS_ROCM_ROCM_DEVICE_API_H_

#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>
#include <tvm_runtime/backend/gpu/pinned_host_memory.h>

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

/* kDLROCMHost: pinned host memory (backend/gpu/pinned_host_memory.h says how it synchronizes). */
class RocmHostDeviceAPI final : public backend::PinnedHostMemory<RocmRuntime> {
 public:
  RocmHostDeviceAPI();
  void* AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                  DLDataType type_hint) override;
  void FreeData(int32_t device_id, void* data) override;
};

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_ROCM_DEVICE_API_H_
