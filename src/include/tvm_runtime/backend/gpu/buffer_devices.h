/*
 * The memory half of the device table for a backend whose memory handles are buffer descriptors
 * (Vulkan, WebGPU): a `Buffer*` with `device_id` and `size`, owned by a device object that the
 * runtime creates on first use and that copies into, out of and within its own buffers.
 *
 *   FreeData    the owning device frees it; a no-op once the process is exiting (the driver may
 *               be half torn down by then: leak instead)
 *   CopyData    both ranges checked first (device_copy.h: ValueError, never an out-of-bounds
 *               device access); two devices share no memory, so a copy between them goes
 *               through host memory
 *   StreamSync  these backends have no streams: waits for the device, unless it was never
 *               created (nothing to wait for: do not create it just to sync)
 *
 * Runtime (a VendorRuntime<>) provides Info(id) (throws for a missing device), Device(id)
 * (created on first use), PeekDevice(id) (nullptr unless created) and shut_down(); its device
 * provides Free, CopyFromHost, CopyToHost, CopyOnDevice and Sync.  The subclass allocates.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_BUFFER_DEVICES_H_
#define TVM_RUNTIME_BACKEND_GPU_BUFFER_DEVICES_H_

#include <dlpack/dlpack.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <cstdint>
#include <vector>

namespace tvm_runtime {
namespace backend {

template <int32_t DeviceType, typename Runtime, typename Buffer>
class BufferDevices : public NumberedDevices<DeviceType, Runtime> {
 public:
  void FreeData(int32_t device_id, void* data) final {
    Buffer* buf = static_cast<Buffer*>(data);
    if (buf == nullptr || Runtime::Global().shut_down()) return;
    Runtime::Global().Device(buf->device_id).Free(buf);
  }

  void CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, DLDataType type_hint,
                void* stream) final {
    CopyDirection dir = ClassifyCopy(dev_from, dev_to, DeviceType, api_);
    if (nbytes == 0) return;
    Runtime& rt = Runtime::Global();
    switch (dir) {
      case CopyDirection::kHostToDevice: {
        Buffer* dst = Checked(to, to_offset, nbytes, "destination");
        rt.Device(dst->device_id)
            .CopyFromHost(static_cast<const char*>(from) + from_offset, dst, to_offset, nbytes);
        return;
      }
      case CopyDirection::kDeviceToHost: {
        Buffer* src = Checked(from, from_offset, nbytes, "source");
        rt.Device(src->device_id)
            .CopyToHost(src, from_offset, static_cast<char*>(to) + to_offset, nbytes);
        return;
      }
      case CopyDirection::kDeviceToDevice: {
        Buffer* src = Checked(from, from_offset, nbytes, "source");
        Buffer* dst = Checked(to, to_offset, nbytes, "destination");
        if (src->device_id == dst->device_id) {
          rt.Device(src->device_id).CopyOnDevice(src, from_offset, dst, to_offset, nbytes);
        } else {
          std::vector<char> bounce(nbytes);
          rt.Device(src->device_id).CopyToHost(src, from_offset, bounce.data(), nbytes);
          rt.Device(dst->device_id).CopyFromHost(bounce.data(), dst, to_offset, nbytes);
        }
        return;
      }
    }
  }

  void StreamSync(int32_t device_id, void* stream) final {
    Runtime& rt = Runtime::Global();
    rt.Info(device_id);  // a missing device is an error, as for every other call
    if (auto* device = rt.PeekDevice(device_id)) device->Sync();
  }

 protected:
  /* `api` names the backend in copy errors ("Vulkan"). */
  explicit BufferDevices(const char* api) : api_(api) {}

 private:
  Buffer* Checked(const void* handle, uint64_t offset, uint64_t nbytes, const char* side) const {
    Buffer* buf = static_cast<Buffer*>(const_cast<void*>(handle));
    CheckCopyRange(buf, buf != nullptr ? buf->size : 0, offset, nbytes, side, api_);
    return buf;
  }

  const char* api_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_BUFFER_DEVICES_H_
