/*
 * Entry points of libtvm_runtime_vulkan.so.  Registration runs when the Python hook calls
 * TVMRuntimeBackendRegister, never in a static constructor, and does not touch Vulkan: the
 * loader library is opened on first device use.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/backend_entry.h>
#include <tvm_runtime/backend/cache/persistent_cache.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <string>
#include <tuple>

#include "vulkan_device.h"
#include "vulkan_device_api.h"
#include "vulkan_module.h"
#include "vulkan_pipeline_cache.h"
#include "vulkan_runtime.h"
#include "vulkan_timer.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::String;

::tvm::ffi::Map<String, int64_t> DeviceStatsOf(DLDevice dev) {
  backend::RequireDeviceType(dev, kDeviceTypeVulkan, "Vulkan");
  VulkanRuntime::Global().Info(dev.device_id);
  MemoryStats m;
  CommandStream::Counters c;
  if (VulkanDevice* d = VulkanRuntime::Global().PeekDevice(dev.device_id)) {
    std::tie(m, c) = d->Stats();
  }
  ::tvm::ffi::Map<String, int64_t> out;
  auto set = [&out](const char* key, uint64_t value) { out.Set(key, static_cast<int64_t>(value)); };
  set("blocks", m.blocks);
  set("block_bytes", m.block_bytes);
  set("live_allocations", m.live_allocations);
  set("live_bytes", m.live_bytes);
  set("device_allocations", m.device_allocations);
  set("commands", c.commands);
  set("submits", c.submits);
  set("fence_waits", c.fence_waits);
  return out;
}

}  // namespace

void RegisterVulkanBackend() {
  // Leaked: the core keeps the table (and this pointer) for the life of the process.
  static VulkanDeviceAPI* device_api = new VulkanDeviceAPI();
  backend::RegisterDeviceAPI(backend::MakeDeviceAPITable(device_api, kDeviceTypeVulkan, "vulkan"));
  backend::RegisterModuleLoader(
      "vulkan", [](const std::string& payload) { return LoadVulkanModule(payload); });
  // apache-tvm's Vulkan target detection (tvm.target.detect_target, -from_device) calls this.
  backend::SetGlobalFunction("device_api.vulkan.get_target_property",
                             [](DLDevice dev, const std::string& key) -> Any {
                               backend::RequireDeviceType(dev, kDeviceTypeVulkan, "Vulkan");
                               VulkanRuntime& rt = VulkanRuntime::Global();
                               return TargetProperty(rt.Info(dev.device_id), key);
                             });
  // tvm-runtime diagnostics: allocator and command-stream counters, validation messages.
  backend::SetGlobalFunction(backend::PrivateGlobalName("vulkan", "device_stats"), DeviceStatsOf);
  RegisterVulkanTimer();
  backend::SetGlobalFunction(
      backend::PrivateGlobalName("vulkan", "validation_messages"), [](bool clear) {
        ::tvm::ffi::Array<String> out;
        for (const std::string& m : VulkanRuntime::Global().ValidationMessages(clear)) {
          out.push_back(String(m));
        }
        return out;
      });
  backend::SetGlobalFunction(backend::PrivateGlobalName("vulkan", "validation_enabled"),
                             [] { return VulkanRuntime::Global().validation_enabled(); });
  backend::RegisterCacheInfo("vulkan", [] { return PipelineCache(); });
}

}  // namespace vulkan
}  // namespace tvm_runtime

TVM_RUNTIME_DEFINE_BACKEND_ENTRY(::tvm_runtime::vulkan::RegisterVulkanBackend)
