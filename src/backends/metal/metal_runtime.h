/*
 * Process-wide Metal state: the Metal devices (MTLCopyAllDevices, else the system default
 * device), discovered on first device use (backend::LazyDevices), and the streams work is
 * queued on.  A failure (no libobjc, no Metal.framework, no device) is remembered as text for
 * Device.exist == False and the diagnostics, never thrown from availability queries.
 */
#ifndef TVM_RUNTIME_BACKENDS_METAL_METAL_RUNTIME_H_
#define TVM_RUNTIME_BACKENDS_METAL_METAL_RUNTIME_H_

#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_runtime/backend/gpu/vendor_runtime.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "metal_stream.h"
#include "objc_library.h"

namespace tvm_runtime {
namespace metal {

constexpr int32_t kDeviceTypeMetal = 8;  // kDLMetal

struct MetalDevice {
  id device = nullptr;  // retained for the life of the process
  std::string name;
  MTLSize max_threads_per_threadgroup{0, 0, 0};
  uint64_t max_threadgroup_memory = 0;
  uint64_t working_set_size = 0;  // recommendedMaxWorkingSetSize: the memory it should use
  bool unified_memory = false;
  NSUInteger language_version = 0;  // the MTLLanguageVersion kernels are compiled with
  // language_version as "major.minor" (MTLLanguageVersion packs them as major << 16 | minor).
  std::string LanguageVersionText() const {
    return std::to_string(language_version >> 16) + "." + std::to_string(language_version & 0xFFFF);
  }
  // The default stream; replaced (never freed: launches in flight may hold it) by
  // metal.ResetGlobalState.
  std::atomic<MetalStream*> default_stream{nullptr};
};

class MetalRuntime : public backend::VendorRuntime<MetalRuntime, MetalDevice> {
 public:
  /* The device, or a RuntimeError/ValueError that says why it cannot be used. */
  MetalDevice& Device(int32_t device_id) { return Discovered(device_id); }
  const ObjcApi& api() const { return *api_; }

  /* The stream work for `device_id` goes to on this thread: the stream set in tvm-ffi's stream
   * context (Device.set_raw_stream), else the device's default stream. */
  MetalStream* CurrentStream(int32_t device_id) {
    MetalDevice& d = Device(device_id);
    void* stream = TVMFFIEnvGetStream(kDeviceTypeMetal, device_id);
    return stream != nullptr ? static_cast<MetalStream*>(stream) : d.default_stream.load();
  }
  /* `stream` itself, or the current one for NULL. */
  MetalStream* StreamOrCurrent(int32_t device_id, void* stream) {
    return stream != nullptr ? static_cast<MetalStream*>(stream) : CurrentStream(device_id);
  }

  /* metal.ResetGlobalState: waits for every default stream, then gives each device a new one
   * (a fresh command queue with zeroed profile counters). */
  void ResetDefaultStreams();

 private:
  friend class backend::VendorRuntime<MetalRuntime, MetalDevice>;
  MetalRuntime() : VendorRuntime("Metal") {}
  std::string Discover(DeviceList* out);

  const ObjcApi* api_ = nullptr;  // set by Discover(), before discovery publishes its result
  std::mutex reset_mu_;
};

}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_METAL_RUNTIME_H_
