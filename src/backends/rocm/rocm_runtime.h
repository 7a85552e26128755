/*
 * Process-wide HIP state: the runtime library and every device with its static properties.
 * Nothing here touches HIP before the first device query; a runtime that is missing or finds no
 * GPU is remembered as text (Device.exist == False plus the diagnostics), never thrown from the
 * queries that report availability.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_ROCM_RUNTIME_H_
#define TVM_RUNTIME_BACKENDS_ROCM_ROCM_RUNTIME_H_

#include <tvm_runtime/backend/gpu/vendor_runtime.h>

#include <cstdint>
#include <string>

#include "hip_api.h"

namespace tvm_runtime {
namespace rocm {

constexpr int32_t kDeviceTypeROCM = 10;      // kDLROCM
constexpr int32_t kDeviceTypeROCMHost = 11;  // kDLROCMHost

struct RocmDevice {
  int32_t id = 0;
  std::string name;      // marketing name, e.g. "AMD Instinct MI210"
  std::string gcn_arch;  // gcnArchName with features, e.g. "gfx90a:sramecc+:xnack-"
  int warp_size = 0;     // the wavefront size: 64 (CDNA, GCN) or 32 (RDNA)

  /* The attribute, or `fallback` when the runtime does not know it. */
  int Attribute(int attribute, int fallback = 0) const;
  /* "ROCm device 0 (AMD Instinct MI210, gfx90a:sramecc+:xnack-)". */
  std::string Describe() const;
};

class RocmRuntime : public backend::VendorRuntime<RocmRuntime, RocmDevice> {
 public:
  /* hipRuntimeGetVersion / hipDriverGetVersion, 0 when unknown. */
  int RuntimeVersion() {
    Init();
    return runtime_version_;
  }
  int DriverVersion() {
    Init();
    return driver_version_;
  }

  /* The device, or a RuntimeError/ValueError that says why it cannot be used. Hot path. */
  RocmDevice& Device(int32_t device_id) { return Discovered(device_id); }

  /* Valid once Available() returned true (or Device() returned). */
  const HipApi& api() const { return *api_; }

  /* Makes `device` HIP's current device on this thread (a no-op when it already is). */
  void MakeCurrent(const RocmDevice& device);

 private:
  friend class backend::VendorRuntime<RocmRuntime, RocmDevice>;
  RocmRuntime() : VendorRuntime("ROCm") {}
  std::string Discover(DeviceList* out);

  // Set by Discover(), before discovery publishes its result.
  const HipApi* api_ = nullptr;
  int runtime_version_ = 0;
  int driver_version_ = 0;
};

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_ROCM_RUNTIME_H_
