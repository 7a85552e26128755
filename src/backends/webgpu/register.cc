/*
 * Entry points of libtvm_runtime_webgpu.so.  Registration runs when the Python hook calls
 * TVMRuntimeBackendRegister, never in a static constructor, and does not open wgpu-native: the
 * library is opened on first device use.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/backend_entry.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <string>
#include <vector>

#include "webgpu_device.h"
#include "webgpu_device_api.h"
#include "webgpu_module.h"
#include "webgpu_runtime.h"
#include "webgpu_timer.h"

namespace tvm_runtime {
namespace webgpu {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::Array;
using ::tvm::ffi::Map;
using ::tvm::ffi::String;

/* Adapter identity, graphics API, features and the limits that matter for compute. */
Map<String, Any> AdapterInfoOf(DLDevice dev) {
  backend::RequireDeviceType(dev, kDeviceTypeWebGPU, "WebGPU");
  const AdapterInfo& a = WebGPURuntime::Global().Info(dev.device_id);
  const WgpuLibrary& lib = GetWgpuLibrary();
  Map<String, Any> out;
  out.Set("adapter", String(a.name));
  out.Set("vendor", String(a.vendor));
  out.Set("architecture", String(a.architecture));
  out.Set("description", String(a.description));
  out.Set("backend", String(a.BackendName()));
  out.Set("adapter_type", String(a.TypeName()));
  out.Set("wgpu_native_version", String(lib.version));
  out.Set("wgpu_native_library", String(lib.path));
  out.Set("shader_f16", a.shader_f16);
  out.Set("subgroups", a.subgroups);
  auto set = [&out](const char* key, uint64_t v) { out.Set(key, static_cast<int64_t>(v)); };
  const WGPULimits& l = a.limits;
  set("max_compute_invocations_per_workgroup", l.maxComputeInvocationsPerWorkgroup);
  set("max_compute_workgroup_size_x", l.maxComputeWorkgroupSizeX);
  set("max_compute_workgroup_size_y", l.maxComputeWorkgroupSizeY);
  set("max_compute_workgroup_size_z", l.maxComputeWorkgroupSizeZ);
  set("max_compute_workgroups_per_dimension", l.maxComputeWorkgroupsPerDimension);
  set("max_compute_workgroup_storage_size", l.maxComputeWorkgroupStorageSize);
  set("max_storage_buffer_binding_size", l.maxStorageBufferBindingSize);
  set("max_storage_buffers_per_shader_stage", l.maxStorageBuffersPerShaderStage);
  set("max_uniform_buffer_binding_size", l.maxUniformBufferBindingSize);
  set("max_buffer_size", l.maxBufferSize);
  set("subgroup_min_size", a.subgroup_min_size);
  set("subgroup_max_size", a.subgroup_max_size);
  return out;
}

Map<String, int64_t> DeviceStatsOf(DLDevice dev) {
  backend::RequireDeviceType(dev, kDeviceTypeWebGPU, "WebGPU");
  WebGPURuntime::Global().Info(dev.device_id);
  WebGPUDevice::Counters c;
  if (WebGPUDevice* d = WebGPURuntime::Global().PeekDevice(dev.device_id)) c = d->counters();
  Map<String, int64_t> out;
  out.Set("submits", static_cast<int64_t>(c.submits));
  out.Set("dispatches", static_cast<int64_t>(c.dispatches));
  out.Set("live_buffers", static_cast<int64_t>(c.live_buffers));
  out.Set("live_bytes", static_cast<int64_t>(c.live_bytes));
  return out;
}

}  // namespace

void RegisterWebGPUBackend() {
  // Leaked: the core keeps the table (and this pointer) for the life of the process.
  static WebGPUDeviceAPI* device_api = new WebGPUDeviceAPI();
  backend::RegisterDeviceAPI(backend::MakeDeviceAPITable(device_api, kDeviceTypeWebGPU, "webgpu"));
  backend::RegisterModuleLoader(
      "webgpu", [](const std::string& payload) { return LoadWebGPUModule(payload); });
  // The hook passes where the `wgpu` package keeps its library (found without importing it).
  backend::SetGlobalFunction(backend::PrivateGlobalName("webgpu", "set_library_candidates"),
                             [](const Array<String>& paths) {
                               std::vector<std::string> out;
                               for (const String& p : paths) out.emplace_back(p);
                               SetHookLibraryCandidates(std::move(out));
                             });
  backend::SetGlobalFunction(backend::PrivateGlobalName("webgpu", "adapter_info"), AdapterInfoOf);
  backend::SetGlobalFunction(backend::PrivateGlobalName("webgpu", "device_stats"), DeviceStatsOf);
  RegisterWebGPUTimer();
}

}  // namespace webgpu
}  // namespace tvm_runtime

TVM_RUNTIME_DEFINE_BACKEND_ENTRY(::tvm_runtime::webgpu::RegisterWebGPUBackend)
