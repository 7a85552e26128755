/*
 * Process-wide CUDA state: the driver, every device with its static properties, and each
 * device's primary context (retained on first use of that device, never released, as the CUDA
 * runtime does).  Nothing here touches the driver before the first device query; a driver that
 * is missing or fails to initialise is remembered as text (Device.exist == False plus the
 * diagnostics), never thrown from the queries that report availability.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_RUNTIME_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_RUNTIME_H_

#include <tvm_runtime/backend/gpu/vendor_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "cuda_api.h"

namespace tvm_runtime {
namespace cuda {

constexpr int32_t kDeviceTypeCUDA = 2;      // kDLCUDA
constexpr int32_t kDeviceTypeCUDAHost = 3;  // kDLCUDAHost

struct CudaDevice {
  int32_t id = 0;
  CUdevice handle = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  // Primary context, retained lazily by CudaRuntime::Context().
  std::atomic<CUcontext> context{nullptr};

  /* Compute capability as TVM's arch number, e.g. 86 for sm_86. */
  int sm() const { return cc_major * 10 + cc_minor; }
  /* The attribute, or `fallback` when the driver does not know it. */
  int Attribute(CUdevice_attribute attr, int fallback = 0) const;
};

class CudaRuntime : public backend::VendorRuntime<CudaRuntime, CudaDevice> {
 public:
  /* cuDriverGetVersion (e.g. 12040), 0 when no driver could be loaded. */
  int DriverVersion() {
    Init();
    return driver_version_;
  }

  /* The device, or a RuntimeError/ValueError that says why it cannot be used. Hot path. */
  CudaDevice& Device(int32_t device_id) { return Discovered(device_id); }

  /* Valid once Available() returned true (or Device() returned). */
  const CuApi& api() const { return *api_; }

  /* The device's primary context, retained on first use. */
  CUcontext Context(CudaDevice& device) {
    CUcontext ctx = device.context.load(std::memory_order_acquire);
    return ctx != nullptr ? ctx : RetainContext(device);
  }

  /* Makes the device's primary context current on this thread (a no-op when it already is,
   * which is the common case on every launch). */
  void MakeCurrent(CudaDevice& device) {
    CUcontext ctx = Context(device);
    CUcontext current = nullptr;
    if (api_->CtxGetCurrent(&current) != CUDA_SUCCESS || current != ctx) SetCurrent(ctx);
  }

 private:
  friend class backend::VendorRuntime<CudaRuntime, CudaDevice>;
  CudaRuntime() : VendorRuntime("CUDA") {}
  std::string Discover(DeviceList* out);
  CUcontext RetainContext(CudaDevice& device);
  void SetCurrent(CUcontext ctx);

  // Set by Discover(), before discovery publishes its result.
  const CuApi* api_ = nullptr;
  int driver_version_ = 0;
};

/* Pushes a device's context for the lifetime of the guard and restores the previous one, for
 * work that must not change the calling thread's current context (freeing, unloading). */
class ScopedContext {
 public:
  ScopedContext(const CuApi& api, CUcontext ctx);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  const CuApi& api_;
  bool pushed_ = false;
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_RUNTIME_H_
