/*
 * Process-wide Vulkan state: the loader, one VkInstance, the physical devices that can run
 * compute shaders (discrete GPUs first) and, created on first use, one logical device each.
 *
 * Nothing touches the driver until the first device query.  A failure to initialize is kept as
 * text (Device.exist == False, `python -m tvm.backend` shows it), never thrown from the queries
 * that report availability.  The singleton is never destroyed: at process exit it only waits for
 * the devices to go idle and then stops serving calls, because tensors and modules that Python
 * never freed may still be released by other libraries' static destructors afterwards.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_RUNTIME_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_RUNTIME_H_

#include <tvm_runtime/backend/gpu/vendor_runtime.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "vk_api.h"
#include "vk_library.h"
#include "vulkan_physical_device.h"

namespace tvm_runtime {
namespace vulkan {

constexpr int32_t kDeviceTypeVulkan = 7;  // kDLVulkan
constexpr int kMaxDevices = 64;

/* Environment switches (documented in docs/backends/vulkan.md). */
constexpr const char* kValidationEnvVar = "TVM_VULKAN_VALIDATION";  // 1: enable Khronos layer

class VulkanDevice;

/* Discovery finds the physical devices (discrete GPUs first); logical devices are created on
 * first use. */
class VulkanRuntime : public backend::VendorRuntime<VulkanRuntime, PhysicalDeviceInfo> {
 public:
  /* The physical device, or a RuntimeError/ValueError that says why it cannot be used. */
  const PhysicalDeviceInfo& Info(int32_t device_id) { return Discovered(device_id); }

  /* The logical device, created on first use (thread-safe).  Hot path: one acquire load. */
  VulkanDevice& Device(int32_t device_id) {
    if (static_cast<uint32_t>(device_id) < static_cast<uint32_t>(kMaxDevices)) {
      VulkanDevice* d = devices_[device_id].load(std::memory_order_acquire);
      if (d != nullptr) return *d;
    }
    return CreateDevice(device_id);
  }
  /* The logical device if it was created, else nullptr. */
  VulkanDevice* PeekDevice(int32_t device_id) const {
    if (static_cast<uint32_t>(device_id) >= static_cast<uint32_t>(kMaxDevices)) return nullptr;
    return devices_[device_id].load(std::memory_order_acquire);
  }

  const VkInstanceFunctions& instance_functions() const { return instance_fns_; }

  /* True once the process is exiting: frees and launches become no-ops. */
  bool shut_down() const { return shut_down_.load(std::memory_order_acquire); }

  /* Messages of the validation layer (TVM_VULKAN_VALIDATION=1) of severity warning or error. */
  std::vector<std::string> ValidationMessages(bool clear);
  /* True when the Khronos validation layer is active in this process. */
  bool validation_enabled() {
    Available();
    return validation_enabled_;
  }

  /* Called once at process exit (from a static destructor). */
  void OnExitHook();

 private:
  friend class backend::VendorRuntime<VulkanRuntime, PhysicalDeviceInfo>;
  VulkanRuntime() : VendorRuntime("Vulkan") {}
  /* Opens the loader, creates the instance and lists the compute-capable devices; returns ""
   * or why there is none. */
  std::string Discover(DeviceList* out);
  /* Returns why no instance could be created ("" when it was). */
  std::string CreateInstance(const VkGlobalFunctions& global);
  VulkanDevice& CreateDevice(int32_t device_id);
  static VkBool32 OnValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                      VkFlags types,
                                      const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

  std::atomic<bool> shut_down_{false};
  bool validation_enabled_ = false;
  VkInstance instance_ = nullptr;
  uint32_t instance_api_version_ = kVkApiVersion10;
  VkInstanceFunctions instance_fns_;

  std::mutex device_mu_;
  std::array<std::atomic<VulkanDevice*>, kMaxDevices> devices_{};

  std::mutex validation_mu_;
  std::vector<std::string> validation_messages_;
};

/* True if the environment variable is set to 1/true/yes/on. */
bool EnvFlag(const char* name);

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_RUNTIME_H_
