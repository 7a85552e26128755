/*
 * The device table of pinned (page-locked) host memory that a GPU copies from and to
 * asynchronously: kDLCUDAHost, kDLROCMHost.  One pool shared by all GPUs, so a single device,
 * index 0, which exists when the runtime found a GPU.
 *
 * Synchronization (as apache-tvm's cuda_host): a device copy into or out of pinned memory is
 * queued on a GPU stream and may still be running when CopyData returns.  StreamSync waits for
 * it: with no stream, for the current stream of every GPU in use; with a stream, for that
 * stream.  Host-side copies of pinned memory (numpy(), copyfrom from the CPU) wait the same way
 * first, so they never see a copy in flight.  The backend supplies those waits and its copy with
 * a GPU side (PinnedHostHooks), and allocates and frees.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_PINNED_HOST_MEMORY_H_
#define TVM_RUNTIME_BACKEND_GPU_PINNED_HOST_MEMORY_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/c_api.h>

#include <cstdint>
#include <string>

namespace tvm_runtime {
namespace backend {

struct PinnedHostHooks {
  const char* name;  // Device.device_name, e.g. "CUDA pinned host memory"
  /* Waits for the device work that may read or write pinned memory: `stream` NULL, the current
   * stream of every GPU in use; otherwise that stream. */
  void (*sync_users)(void* stream);
  /* A flat copy with at least one GPU side, queued on `stream` (NULL: the current one). */
  void (*copy_with_device)(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                           uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, void* stream);
};

template <typename Runtime>
class PinnedHostMemory : public DeviceBackend {
 public:
  // Host memory belongs to no device: nothing to select.
  void SetDevice(int32_t device_id) final {}

  ::tvm::ffi::Any GetAttr(int32_t device_id, int32_t kind) final {
    bool exists = device_id == 0 && Runtime::Global().NumDevices() > 0;
    if (kind == kTVMRuntimeAttrExist) return static_cast<int64_t>(exists);
    if (exists && kind == kTVMRuntimeAttrDeviceName) return ::tvm::ffi::String(hooks_.name);
    return ::tvm::ffi::Any();
  }

  void CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, DLDataType type_hint,
                void* stream) final {
    if (nbytes == 0) return;
    if (IsHostDevice(dev_from) && IsHostDevice(dev_to)) {
      // The host touches pinned memory now: first let queued device copies into (or out of) it
      // finish, so a read sees what they wrote and a write cannot race one still reading.
      hooks_.sync_users(nullptr);
      CopyBetweenHosts(from, from_offset, to, to_offset, nbytes, dev_from, dev_to);
      return;
    }
    hooks_.copy_with_device(from, from_offset, to, to_offset, nbytes, dev_from, dev_to, stream);
  }

  void StreamSync(int32_t device_id, void* stream) final { hooks_.sync_users(stream); }

  std::string DriverStatus() final { return Runtime::Global().Status(); }
  uint64_t DeviceFlags() const final { return TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC; }

 protected:
  explicit PinnedHostMemory(PinnedHostHooks hooks) : hooks_(hooks) {}

 private:
  PinnedHostHooks hooks_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_PINNED_HOST_MEMORY_H_
