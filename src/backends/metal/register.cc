/*
 * Entry points of libtvm_runtime_metal.  Registration runs when the Python hook calls
 * TVMRuntimeBackendRegister, never in a static constructor, and does not touch Metal: libobjc
 * and the frameworks are opened on first device use.
 */
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/backend_entry.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/device_timer.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <memory>
#include <string>
#include <utility>

#include "metal_device_api.h"
#include "metal_module.h"
#include "metal_runtime.h"

namespace tvm_runtime {
namespace metal {

namespace {

using ::tvm::ffi::Map;
using ::tvm::ffi::String;

/* runtime.timer.metal: each round is timed between two host waits for the device's current
 * stream, so it covers the GPU work queued between "start" and "stop" (apache-tvm samples the
 * GPU timestamp counter after the same waits; both include the idle gap before the first
 * kernel, which the time evaluator's warm-up call keeps small). */
::tvm::ffi::Function MakeTimer(DLDevice dev) {
  backend::RequireDeviceType(dev, kDeviceTypeMetal, "Metal");
  MetalRuntime::Global().Device(dev.device_id);
  const int32_t device_id = dev.device_id;
  auto wait = [device_id] { MetalRuntime::Global().CurrentStream(device_id)->Synchronize(); };
  return backend::MakeDeviceTimer(
      "metal", std::make_shared<backend::HostSyncedSpan<decltype(wait)>>(std::move(wait)));
}

/* metal.GetProfileCounters(device_id): the counters of the device's default stream. */
Map<String, int64_t> ProfileCountersOf(int32_t device_id) {
  const ProfileCounters& c =
      MetalRuntime::Global().Device(device_id).default_stream.load()->counters;
  Map<String, int64_t> out;
  out.Set("dispatches", c.dispatches.load());
  out.Set("flushes", c.flushes.load());
  out.Set("syncs", c.syncs.load());
  out.Set("blits", c.blits.load());
  out.Set("gpu_to_cpu", c.gpu_to_cpu.load());
  out.Set("cpu_to_gpu", c.cpu_to_gpu.load());
  out.Set("gpu_to_gpu", c.gpu_to_gpu.load());
  out.Set("free_syncs", c.free_syncs.load());
  return out;
}

}  // namespace

void RegisterMetalBackend() {
  // Leaked: the core keeps the table (and this pointer) for the life of the process.
  static MetalDeviceAPI* device_api = new MetalDeviceAPI();
  static TVMRuntimeDeviceAPI* table =
      new TVMRuntimeDeviceAPI(backend::MakeDeviceAPITable(device_api, kDeviceTypeMetal, "metal"));
  backend::RegisterDeviceAPI(*table);
  backend::RegisterModuleLoader(
      "metal", [](const std::string& payload) { return LoadMetalModule(payload); });
  RegisterMetalModuleFactory();
  // apache-tvm returns its C++ DeviceAPI object here, which only its own runtime can use; code
  // that probes for the Metal runtime by this name finds it, and gets this backend's C table.
  backend::SetGlobalFunction("device_api.metal", []() -> void* { return table; });
  backend::SetGlobalFunction("runtime.timer.metal", MakeTimer);
  backend::SetGlobalFunction("metal.ResetGlobalState",
                             [] { MetalRuntime::Global().ResetDefaultStreams(); });
  backend::SetGlobalFunction("metal.GetProfileCounters", ProfileCountersOf);
  backend::SetGlobalFunction("metal.ResetProfileCounters", [](int32_t device_id) {
    MetalRuntime::Global().Device(device_id).default_stream.load()->counters.Reset();
  });
}

}  // namespace metal
}  // namespace tvm_runtime

TVM_RUNTIME_DEFINE_BACKEND_ENTRY(::tvm_runtime::metal::RegisterMetalBackend)
