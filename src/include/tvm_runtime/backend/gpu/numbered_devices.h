/*
 * The device table of a GPU backend whose devices are the ones its VendorRuntime<> found,
 * numbered 0 .. NumDevices()-1 (CUDA, ROCm, OpenCL, Vulkan, WebGPU, Metal).  What every such
 * backend answers the same way is answered here once, so a backend only describes a device that
 * exists:
 *
 *   SetDevice(id)             SelectDevice(id) (validates id, opens the driver on first use), then
 *                             the thread's current device (current_device.h) for kernel launches
 *   GetAttr(id, kind)         kTVMRuntimeAttrExist from the runtime's NumDevices(); any other kind
 *                             is None for a device that does not exist, else DeviceAttr(id, kind)
 *   GetTargetProperty(id, k)  None for a device that does not exist, else DeviceTargetProperty
 *   DriverStatus()            the runtime's Status()
 *
 *     class MyDeviceAPI final : public backend::NumberedDevices<kDeviceTypeMine, MyRuntime> {
 *      public:
 *       TVM_RUNTIME_NUMBERED_DEVICES_OVERRIDES;
 *       TVM_RUNTIME_DEVICE_BACKEND_STREAM_OVERRIDES;  // when it has streams
 *     };
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_NUMBERED_DEVICES_H_
#define TVM_RUNTIME_BACKEND_GPU_NUMBERED_DEVICES_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/c_api.h>

#include <cstdint>
#include <string>

namespace tvm_runtime {
namespace backend {

template <int32_t DeviceType, typename Runtime>
class NumberedDevices : public DeviceBackend {
 public:
  void SetDevice(int32_t device_id) final {
    SelectDevice(device_id);
    CurrentDevice<DeviceType>() = device_id;
  }

  ::tvm::ffi::Any GetAttr(int32_t device_id, int32_t kind) final {
    bool exists = HasDevice(device_id);
    if (kind == kTVMRuntimeAttrExist) return static_cast<int64_t>(exists);
    if (!exists) return ::tvm::ffi::Any();
    return DeviceAttr(device_id, kind);
  }

  ::tvm::ffi::Any GetTargetProperty(int32_t device_id, const std::string& key) final {
    if (!HasDevice(device_id)) return ::tvm::ffi::Any();
    return DeviceTargetProperty(device_id, key);
  }

  std::string DriverStatus() final { return Runtime::Global().Status(); }

 protected:
  /* Validates `device_id` (throwing why it is not usable) and makes it current where the vendor
   * API has such a notion. */
  virtual void SelectDevice(int32_t device_id) = 0;
  /* A kTVMRuntimeAttr* of an existing device; None for kinds that make no sense for it. */
  virtual ::tvm::ffi::Any DeviceAttr(int32_t device_id, int32_t kind) = 0;
  /* A target property (Device.target_properties) of an existing device, or None. */
  virtual ::tvm::ffi::Any DeviceTargetProperty(int32_t device_id, const std::string& key) = 0;

 private:
  // Counting opens the driver on first use; 0 devices when it is missing.
  static bool HasDevice(int32_t device_id) {
    return device_id >= 0 && device_id < Runtime::Global().NumDevices();
  }
};

/* For global functions that take a device of one backend: ValueError "expected a <api> device
 * (type <device_type>), got device type <n>" unless `dev` is one. */
inline void RequireDeviceType(const DLDevice& dev, int32_t device_type, const char* api) {
  if (dev.device_type != device_type) {
    ThrowError("ValueError", std::string("expected a ") + api + " device (type " +
                                 std::to_string(device_type) + "), got device type " +
                                 std::to_string(dev.device_type));
  }
}

/* The declarations of what a NumberedDevices subclass defines in its .cc. */
#define TVM_RUNTIME_NUMBERED_DEVICES_OVERRIDES \
  TVM_RUNTIME_DEVICE_BACKEND_MEMORY_OVERRIDES; \
  TVM_RUNTIME_NUMBERED_DEVICES_QUERY_OVERRIDES

/* The three device queries alone (for subclasses of a base that also manages memory). */
#define TVM_RUNTIME_NUMBERED_DEVICES_QUERY_OVERRIDES                    \
  void SelectDevice(int32_t device_id) override;                        \
  ::tvm::ffi::Any DeviceAttr(int32_t device_id, int32_t kind) override; \
  ::tvm::ffi::Any DeviceTargetProperty(int32_t device_id, const std::string& key) override

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_NUMBERED_DEVICES_H_
