/* The CPU device, served through the same C table as every backend. */
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_api_table.h>

#include <cstdlib>
#include <cstring>

#include "core_init.h"
#include "device_registry.h"
#include "host_memory.h"

namespace tvm_runtime {
namespace core {
namespace {

class CPUDevice final : public backend::DeviceBackend {
 public:
  void SetDevice(int32_t) final {}

  ::tvm::ffi::Any GetAttr(int32_t device_id, int32_t kind) final {
    int64_t bytes = -1;
    switch (kind) {
      case kTVMRuntimeAttrExist:
        return 1;
      case kTVMRuntimeAttrTotalGlobalMemory:
        bytes = TotalHostMemory();
        return bytes >= 0 ? ::tvm::ffi::Any(bytes) : ::tvm::ffi::Any();
      case kTVMRuntimeAttrAvailableGlobalMemory:
        bytes = FreeHostMemory();
        return bytes >= 0 ? ::tvm::ffi::Any(bytes) : ::tvm::ffi::Any();
      default:
        return ::tvm::ffi::Any();
    }
  }

  void* AllocData(int32_t, uint64_t nbytes, uint64_t alignment, DLDataType) final {
    if (alignment < TVM_RUNTIME_ALLOC_ALIGNMENT) alignment = TVM_RUNTIME_ALLOC_ALIGNMENT;
    void* ptr = nullptr;
    // Zero-byte tensors still get a valid pointer: compiled code rejects NULL data.
    size_t size = nbytes == 0 ? alignment : static_cast<size_t>(nbytes);
    if (posix_memalign(&ptr, static_cast<size_t>(alignment), size) != 0) {
      backend::ThrowError("RuntimeError", "CPU allocation of " + std::to_string(nbytes) +
                                              " bytes failed (out of memory)");
    }
    return ptr;
  }

  void FreeData(int32_t, void* data) final { std::free(data); }

  void CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                uint64_t nbytes, DLDevice, DLDevice, DLDataType, void*) final {
    std::memcpy(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset,
                static_cast<size_t>(nbytes));
  }

  void StreamSync(int32_t, void*) final {}

  uint64_t DeviceFlags() const final { return TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC; }
};

}  // namespace

void RegisterCPUDevice() {
  static CPUDevice* device = new CPUDevice();  // leaked on purpose: lives as long as the process
  TVMRuntimeDeviceAPI table = backend::MakeDeviceAPITable(device, kDLCPU, "cpu");
  // Re-initialisation (a second TVMRuntimeInitialize) replaces the identical table.
  Check(TVMRuntimeRegisterDeviceAPI(&table, /*allow_override=*/1));
}

}  // namespace core
}  // namespace tvm_runtime
