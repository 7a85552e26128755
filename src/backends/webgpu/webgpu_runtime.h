/*
 * Process-wide WebGPU state: wgpu-native, one WGPUInstance, the adapters that can run compute
 * shaders in preference order, and (created on first use) one WGPUDevice per adapter.
 *
 * Nothing touches the library before the first device query; a failure is kept as text for
 * Device.exist == False and `python -m tvm.backend`.  Adapter order: discrete GPUs, then
 * integrated, virtual/unknown and CPU adapters ("high-performance first"); within one kind,
 * Vulkan/Metal/D3D12 before OpenGL.  `TVM_WEBGPU_BACKEND` (vulkan, metal, dx12, gl) keeps one
 * graphics API only; `TVM_WEBGPU_ADAPTER` keeps the adapters whose name contains the text.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_RUNTIME_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_RUNTIME_H_

#include <tvm_runtime/backend/gpu/vendor_runtime.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "wgpu_api.h"
#include "wgpu_library.h"

namespace tvm_runtime {
namespace webgpu {

constexpr int32_t kDeviceTypeWebGPU = 15;  // kDLWebGPU
constexpr int kMaxDevices = 16;
constexpr const char* kBackendEnvVar = "TVM_WEBGPU_BACKEND";
constexpr const char* kAdapterEnvVar = "TVM_WEBGPU_ADAPTER";

struct AdapterInfo {
  WGPUAdapter adapter = nullptr;
  std::string name;  // e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string vendor;
  std::string architecture;
  std::string description;  // driver description, e.g. "Mesa 22.3.6 (LLVM 15.0.6)"
  WGPUBackendType backend = WGPUBackendType_Undefined;
  WGPUAdapterType type = WGPUAdapterType_Unknown;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint32_t subgroup_min_size = 0;
  uint32_t subgroup_max_size = 0;
  WGPULimits limits{};
  bool shader_f16 = false;
  bool subgroups = false;

  const char* BackendName() const;
  const char* TypeName() const;
};

class WebGPUDevice;

/* Discovery finds the adapters; devices are created on first use. */
class WebGPURuntime : public backend::VendorRuntime<WebGPURuntime, AdapterInfo> {
 public:
  /* The base's singleton, plus the hook that marks the process as exiting (OnExitHook). */
  static WebGPURuntime& Global();

  /* The adapter, or a RuntimeError/ValueError that says why it cannot be used. */
  const AdapterInfo& Info(int32_t device_id) { return Discovered(device_id); }
  /* The device, created on first use (thread-safe); hot path is one acquire load. */
  WebGPUDevice& Device(int32_t device_id) {
    if (static_cast<uint32_t>(device_id) < static_cast<uint32_t>(kMaxDevices)) {
      WebGPUDevice* d = devices_[device_id].load(std::memory_order_acquire);
      if (d != nullptr) return *d;
    }
    return CreateDevice(device_id);
  }
  WebGPUDevice* PeekDevice(int32_t device_id) const {
    if (static_cast<uint32_t>(device_id) >= static_cast<uint32_t>(kMaxDevices)) return nullptr;
    return devices_[device_id].load(std::memory_order_acquire);
  }

  const WgpuFunctions& fn() const { return GetWgpuLibrary().fn; }
  WGPUInstance instance() const { return instance_; }
  /* True once the process is exiting: frees become no-ops. */
  bool shut_down() const { return shut_down_.load(std::memory_order_acquire); }
  void OnExitHook();

 private:
  friend class backend::VendorRuntime<WebGPURuntime, AdapterInfo>;
  WebGPURuntime() : VendorRuntime("WebGPU") {}
  std::string Discover(DeviceList* out);
  WebGPUDevice& CreateDevice(int32_t device_id);

  std::atomic<bool> shut_down_{false};
  WGPUInstance instance_ = nullptr;
  std::mutex device_mu_;
  std::array<std::atomic<WebGPUDevice*>, kMaxDevices> devices_{};
};

/* Text of a WGPUStringView (NULL/WGPU_STRLEN-terminated or sized). */
std::string ToString(WGPUStringView s);

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_RUNTIME_H_
