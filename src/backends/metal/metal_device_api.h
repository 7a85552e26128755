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

#include <string>

namespace tvm_runtime {
namespace metal {

class MetalDeviceAPI final : public backend::DeviceBackend {
 public:
  void SetDevice(int32_t device_id) override;
  ::tvm::ffi::Any GetAttr(int32_t device_id, int32_t kind) override;
  void* AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                  DLDataType type_hint) override;
  void FreeData(int32_t device_id, void* data) override;
  void CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, DLDataType type_hint,
                void* stream) override;
  void StreamSync(int32_t device_id, void* stream) override;

  bool SupportsStreams() const override { return true; }
  void* StreamCreate(int32_t device_id) override;
  void StreamFree(int32_t device_id, void* stream) override;
  void SyncStreamFromTo(int32_t device_id, void* src, void* dst) override;

  ::tvm::ffi::Any GetTargetProperty(int32_t device_id, const std::string& key) override;
  std::string DriverStatus() override;
};

}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_METAL_DEVICE_API_H_
