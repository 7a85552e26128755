#include "vulkan_runtime.h"

#include <strings.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "vk_error.h"
#include "vulkan_device.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::vector<std::string> InstanceExtensions(const VkGlobalFunctions& g, const char* layer) {
  uint32_t n = 0;
  if (g.EnumerateInstanceExtensionProperties(layer, &n, nullptr) != VK_SUCCESS) return {};
  std::vector<VkExtensionProperties> props(n);
  if (g.EnumerateInstanceExtensionProperties(layer, &n, props.data()) < 0) return {};
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n && i < props.size(); ++i) out.emplace_back(props[i].extensionName);
  return out;
}

bool HasLayer(const VkGlobalFunctions& g, const char* name) {
  uint32_t n = 0;
  if (g.EnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  if (g.EnumerateInstanceLayerProperties(&n, layers.data()) < 0) return false;
  for (uint32_t i = 0; i < n && i < layers.size(); ++i) {
    if (std::strcmp(layers[i].layerName, name) == 0) return true;
  }
  return false;
}

bool Contains(const std::vector<std::string>& v, const char* s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Where the loader looks for driver manifests (ICD JSON files).
std::string ManifestLocation() {
  for (const char* var : {"VK_DRIVER_FILES", "VK_ICD_FILENAMES"}) {
    const char* value = std::getenv(var);
    if (value != nullptr && value[0] != '\0') return std::string(var) + "=" + value;
  }
  return "/usr/share/vulkan/icd.d and /etc/vulkan/icd.d";
}

std::string NoDriverHint() {
  return "no Vulkan driver (ICD) was found in " + ManifestLocation() +
         ". Install one: apt-get install mesa-vulkan-drivers (lavapipe runs on the CPU; it also "
         "holds Mesa's GPU drivers), or the GPU vendor's Vulkan driver.";
}

// Waits for every device to go idle when the process exits (see the class comment).
struct ExitGuard {
  ~ExitGuard() { VulkanRuntime::Global().OnExitHook(); }
};

}  // namespace

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  return std::strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
         strcasecmp(v, "on") == 0;
}

std::string VulkanRuntime::CreateInstance(const VkGlobalFunctions& global) {
  uint32_t loader_version = kVkApiVersion10;
  if (global.EnumerateInstanceVersion != nullptr) global.EnumerateInstanceVersion(&loader_version);
  // 1.3 is the newest version this backend knows; a newer loader serves it too.
  instance_api_version_ = std::min(
      VkMakeApiVersion(VkApiVersionMajor(loader_version), VkApiVersionMinor(loader_version), 0),
      kVkApiVersion13);

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  std::vector<std::string> available = InstanceExtensions(global, nullptr);
  if (instance_api_version_ < kVkApiVersion11 &&
      Contains(available, "VK_KHR_get_physical_device_properties2")) {
    extensions.push_back("VK_KHR_get_physical_device_properties2");
  }
  bool validation = false;
  if (EnvFlag(kValidationEnvVar)) {
    if (HasLayer(global, kValidationLayer) &&
        Contains(InstanceExtensions(global, kValidationLayer), "VK_EXT_debug_utils")) {
      layers.push_back(kValidationLayer);
      extensions.push_back("VK_EXT_debug_utils");
      validation = true;
    } else {
      std::lock_guard<std::mutex> lock(validation_mu_);
      validation_messages_.push_back(std::string("[NOTE] ") + kValidationEnvVar +
                                     "=1 but the Khronos validation layer (" + kValidationLayer +
                                     ") is not installed: apt-get install vulkan-validationlayers");
    }
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "tvm-runtime";
  app.pEngineName = "tvm-runtime-vulkan";
  app.apiVersion = instance_api_version_;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult r = global.CreateInstance(&info, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    instance_ = nullptr;
    std::string failed = "the Vulkan loader (" + GetVkLibrary().path +
                         ") could not create an instance (" + VkResultString(r) + "): ";
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) return failed + NoDriverHint();
    // The Khronos loader also answers VK_ERROR_OUT_OF_HOST_MEMORY for a driver manifest it
    // cannot parse, so point at the manifests rather than only at memory.
    return failed + "check the driver manifests in " + ManifestLocation() +
           " (a malformed ICD JSON file is reported this way); VK_LOADER_DEBUG=error prints the "
           "loader's reason.";
  }
  instance_fns_ = LoadInstanceFunctions(global, instance_);

  validation_enabled_ = validation;
  if (validation && instance_fns_.CreateDebugUtilsMessengerEXT != nullptr) {
    VkDebugUtilsMessengerCreateInfoEXT messenger{};
    messenger.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger.pfnUserCallback = &VulkanRuntime::OnValidationMessage;
    messenger.pUserData = this;
    VkDebugUtilsMessengerEXT handle = nullptr;  // lives as long as the instance
    CheckVk(instance_fns_.CreateDebugUtilsMessengerEXT(instance_, &messenger, nullptr, &handle),
            "vkCreateDebugUtilsMessengerEXT");
  }
  return "";
}

std::string VulkanRuntime::Discover(DeviceList* out) {
  const VkLibrary& lib = GetVkLibrary();
  if (lib.fns == nullptr) return lib.failure;
  std::string failure = CreateInstance(*lib.fns);
  if (instance_ == nullptr) return failure;
  static ExitGuard guard;  // registered after the driver's own static state exists

  uint32_t n = 0;
  CheckVk(instance_fns_.EnumeratePhysicalDevices(instance_, &n, nullptr),
          "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(n);
  if (n != 0) {
    VkResult r = instance_fns_.EnumeratePhysicalDevices(instance_, &n, handles.data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) ThrowVkError(r, "vkEnumeratePhysicalDevices");
    handles.resize(n);
  }
  if (handles.empty()) {
    return "the Vulkan loader (" + lib.path + ") found no physical device: " + NoDriverHint();
  }
  std::string skipped;
  for (VkPhysicalDevice handle : handles) {
    auto info = std::make_unique<PhysicalDeviceInfo>(
        DescribePhysicalDevice(instance_fns_, handle, instance_api_version_));
    if (info->queue_family == kNoQueueFamily) {
      skipped += std::string("\n  device '") + info->props.deviceName +
                 "': no queue family supports compute";
      continue;
    }
    out->push_back(std::move(info));
  }
  // Discrete GPUs first, so that tvm.vulkan(0) is the fastest device (apache-tvm's order).
  std::stable_sort(out->begin(), out->end(),
                   [](const auto& a, const auto& b) { return a->Rank() < b->Rank(); });
  if (out->size() > static_cast<size_t>(kMaxDevices)) out->resize(kMaxDevices);
  if (out->empty()) {
    return "the Vulkan loader (" + lib.path + ") found " + std::to_string(handles.size()) +
           " physical device(s) but none can run compute shaders:" + skipped;
  }
  return "";
}

VulkanDevice& VulkanRuntime::CreateDevice(int32_t device_id) {
  const PhysicalDeviceInfo& info = Info(device_id);  // throws for a missing device
  if (shut_down()) backend::ThrowError("RuntimeError", "the Vulkan runtime has shut down");
  std::lock_guard<std::mutex> lock(device_mu_);
  VulkanDevice* d = devices_[device_id].load(std::memory_order_relaxed);
  if (d == nullptr) {
    d = new VulkanDevice(*this, info, device_id);  // never destroyed, see the header
    devices_[device_id].store(d, std::memory_order_release);
  }
  return *d;
}

void VulkanRuntime::OnExitHook() {
  // No command may be executing while the driver's own static state is torn down.
  for (auto& slot : devices_) {
    VulkanDevice* d = slot.load(std::memory_order_acquire);
    if (d != nullptr) d->WaitIdleAtExit();
  }
  shut_down_.store(true, std::memory_order_release);
}

std::vector<std::string> VulkanRuntime::ValidationMessages(bool clear) {
  std::lock_guard<std::mutex> lock(validation_mu_);
  std::vector<std::string> out = validation_messages_;
  if (clear) validation_messages_.clear();
  return out;
}

VkBool32 VulkanRuntime::OnValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                            VkFlags types,
                                            const VkDebugUtilsMessengerCallbackDataEXT* data,
                                            void* user) {
  auto* self = static_cast<VulkanRuntime*>(user);
  std::string text =
      (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "[ERROR] " : "[WARNING] ";
  if (data != nullptr && data->pMessageIdName != nullptr)
    text += std::string(data->pMessageIdName) + ": ";
  if (data != nullptr && data->pMessage != nullptr) text += data->pMessage;
  std::fprintf(stderr, "tvm-runtime-vulkan validation %s\n", text.c_str());
  std::lock_guard<std::mutex> lock(self->validation_mu_);
  self->validation_messages_.push_back(std::move(text));
  return kVkFalse;  // never abort the call that triggered the message
}

}  // namespace vulkan
}  // namespace tvm_runtime
