#include "vk_library.h"

#include <dlfcn.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

namespace tvm_runtime {
namespace vulkan {

namespace {

// Looks `name` up through `lookup`, falling back to the KHR/EXT spelling of functions that were
// promoted to core in Vulkan 1.1 (a 1.0 instance only exposes the extension name).
template <typename Lookup>
PFN_vkVoidFunction Find(Lookup&& lookup, const std::string& name) {
  PFN_vkVoidFunction fn = lookup(name.c_str());
  if (fn == nullptr && name.size() > 1 && name.back() == '2') fn = lookup((name + "KHR").c_str());
  return fn;
}

// Fills every pointer of an X-list; returns the comma-separated names of missing required ones.
#define TVM_VK_RESOLVE(name, required)                                                  \
  table.name = reinterpret_cast<PFN_vk##name>(Find(lookup, std::string("vk") + #name)); \
  if (table.name == nullptr && (required))                                              \
    missing += (missing.empty() ? "" : ", ") + std::string("vk" #name);

template <typename Lookup>
std::string ResolveGlobal(Lookup&& lookup, VkGlobalFunctions& table) {
  std::string missing;
  TVM_VK_GLOBAL_FUNCTIONS(TVM_VK_RESOLVE)
  return missing;
}

template <typename Lookup>
std::string ResolveInstance(Lookup&& lookup, VkInstanceFunctions& table) {
  std::string missing;
  TVM_VK_INSTANCE_FUNCTIONS(TVM_VK_RESOLVE)
  return missing;
}

template <typename Lookup>
std::string ResolveDevice(Lookup&& lookup, VkDeviceFunctions& table) {
  std::string missing;
  TVM_VK_DEVICE_FUNCTIONS(TVM_VK_RESOLVE)
  return missing;
}

#undef TVM_VK_RESOLVE

VkLibrary Load() {
  static VkGlobalFunctions global;  // filled once; the library is intentionally never closed
  VkLibrary lib;
  backend::VendorLibrary opened = backend::OpenVendorLibrary(
      backend::VendorLibraryCandidates(kLibraryEnvVar, {"libvulkan.so.1", "libvulkan.so"}),
      [](void* handle, std::string* why) {
        auto gipa =
            reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
        if (gipa == nullptr) {
          *why = "not a Vulkan loader (no vkGetInstanceProcAddr)";
          return false;
        }
        global.GetInstanceProcAddr = gipa;
        std::string missing =
            ResolveGlobal([gipa](const char* n) { return gipa(nullptr, n); }, global);
        if (!missing.empty()) {
          *why = "not a usable Vulkan loader (missing " + missing + ")";
          return false;
        }
        return true;
      });
  if (opened.handle == nullptr) {
    lib.failure = "the Vulkan loader libvulkan.so.1 could not be opened (" + opened.tried +
                  "). Install it with a driver (Debian/Ubuntu: apt-get install libvulkan1 "
                  "mesa-vulkan-drivers; Fedora/RHEL: dnf install vulkan-loader "
                  "mesa-vulkan-drivers), or set " +
                  std::string(kLibraryEnvVar) + " to the path of libvulkan.so.1.";
    return lib;
  }
  lib.fns = &global;
  lib.path = opened.path;
  return lib;
}

}  // namespace

const VkLibrary& GetVkLibrary() {
  // A function-local static: thread-safe one-time initialization, run on first device use.
  static const VkLibrary lib = Load();
  return lib;
}

VkInstanceFunctions LoadInstanceFunctions(const VkGlobalFunctions& global, VkInstance instance) {
  VkInstanceFunctions table;
  PFN_vkGetInstanceProcAddr gipa = global.GetInstanceProcAddr;
  std::string missing =
      ResolveInstance([gipa, instance](const char* n) { return gipa(instance, n); }, table);
  if (!missing.empty()) {
    backend::ThrowError("RuntimeError", "the Vulkan loader lacks instance functions: " + missing);
  }
  return table;
}

VkDeviceFunctions LoadDeviceFunctions(const VkInstanceFunctions& instance, VkDevice device) {
  VkDeviceFunctions table;
  PFN_vkGetDeviceProcAddr gdpa = instance.GetDeviceProcAddr;
  std::string missing =
      ResolveDevice([gdpa, device](const char* n) { return gdpa(device, n); }, table);
  if (!missing.empty()) {
    backend::ThrowError("RuntimeError", "the Vulkan driver lacks device functions: " + missing);
  }
  return table;
}

}  // namespace vulkan
}  // namespace tvm_runtime
