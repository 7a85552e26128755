#include "device_registry.h"

#include <tvm_runtime/backend/detail/abi_version.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "backend_loader.h"
#include "wheel_owners.h"

namespace tvm_runtime {
namespace core {
namespace {

struct Registry {
  std::mutex mu;
  // Tables are copied in and never freed or moved, so readers can use them without a lock.
  std::atomic<const TVMRuntimeDeviceAPI*> slots[kMaxDeviceType] = {};
  std::unordered_map<int, std::string> failures;  // device type -> why its backend failed
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // leaked: must outlive every static destructor
  return *registry;
}

struct DeviceTypeInfo {
  int type;
  const char* name;
};

// Device codes from DLPack; names as apache-tvm spells them.  Which wheel serves each type is
// declared by the backends themselves (wheel_owners.h).
constexpr DeviceTypeInfo kDeviceTypes[] = {
    {kDLCPU, "cpu"},
    {kDLCUDA, "cuda"},
    {kDLCUDAHost, "cuda_host"},
    {kDLOpenCL, "opencl"},
    {kDLVulkan, "vulkan"},
    {kDLMetal, "metal"},
    {kDLVPI, "vpi"},
    {kDLROCM, "rocm"},
    {kDLROCMHost, "rocm_host"},
    {kDLExtDev, "ext_dev"},
    {kDLCUDAManaged, "cuda_managed"},
    {kDLOneAPI, "oneapi"},
    {kDLWebGPU, "webgpu"},
    {kDLHexagon, "hexagon"},
    {kDLMAIA, "maia"},
    {kDLTrn, "trn"},
};

const DeviceTypeInfo* FindInfo(int device_type) {
  for (const auto& info : kDeviceTypes) {
    if (info.type == device_type) return &info;
  }
  return nullptr;
}

void Validate(const TVMRuntimeDeviceAPI* api) {
  using backend::ThrowError;
  if (api == nullptr) ThrowError("ValueError", "device API table is NULL");
  if (!TVMRuntimeABICompatible(TVM_RUNTIME_ABI_VERSION, api->abi_version)) {
    ThrowError("RuntimeError",
               "device API table has ABI version " + backend::ABIVersionString(api->abi_version) +
                   ", the core supports " + std::to_string(TVM_RUNTIME_ABI_VERSION_MAJOR) + ".0-" +
                   backend::ABIVersionString(TVM_RUNTIME_ABI_VERSION));
  }
  if (api->struct_size < TVM_RUNTIME_DEVICE_API_MIN_SIZE) {
    ThrowError("RuntimeError", "device API table is smaller than ABI 1.0 requires");
  }
  if (api->device_type <= 0 || api->device_type >= kMaxDeviceType) {
    ThrowError("ValueError", "device type " + std::to_string(api->device_type) + " out of range");
  }
  if (!api->set_device || !api->get_attr || !api->alloc_data || !api->free_data ||
      !api->copy_data || !api->stream_sync) {
    ThrowError("ValueError", std::string("device API table for '") + (api->name ? api->name : "?") +
                                 "' lacks a required function");
  }
}

}  // namespace

const TVMRuntimeDeviceAPI* LookupDevice(int device_type) {
  if (device_type <= 0 || device_type >= kMaxDeviceType) return nullptr;
  return GetRegistry().slots[device_type].load(std::memory_order_acquire);
}

std::string DeviceTypeName(int device_type) {
  if (const DeviceTypeInfo* info = FindInfo(device_type)) return info->name;
  return "device_type_" + std::to_string(device_type);
}

std::string DistributionForDevice(int device_type) {
  if (device_type == kDLCPU) return "tvm-runtime";
  const DeviceOwner* owner = FindDeviceOwner(device_type);
  return owner ? owner->distribution : std::string();
}

void NoteBackendFailure(int device_type, const std::string& reason) {
  Registry& reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg.mu);
  reg.failures[device_type] = reason;
}

const TVMRuntimeDeviceAPI& RequireDevice(int device_type) {
  if (const TVMRuntimeDeviceAPI* api = LookupDevice(device_type)) return *api;
  // A program without Python: the installed backend loads on first use (backend_loader.h).
  if (LoadBackendForDevice(device_type)) {
    if (const TVMRuntimeDeviceAPI* api = LookupDevice(device_type)) return *api;
  }
  std::string name = DeviceTypeName(device_type);
  std::string dist = DistributionForDevice(device_type);
  std::string msg = "No runtime backend for device '" + name + "' is loaded.";
  {
    Registry& reg = GetRegistry();
    std::lock_guard<std::mutex> lock(reg.mu);
    auto it = reg.failures.find(device_type);
    if (it != reg.failures.end()) {
      msg += " The installed backend failed to load: " + it->second +
             " (run `python -m tvm.backend` for details).";
      backend::ThrowError("RuntimeError", msg);
    }
  }
  if (!dist.empty()) {
    msg += " Install it with: pip install " + dist;
  } else {
    msg += " No tvm-runtime backend exists for this device type yet.";
  }
  backend::ThrowError("RuntimeError", msg);
}

}  // namespace core
}  // namespace tvm_runtime

extern "C" {

TVM_RUNTIME_DLL uint32_t TVMRuntimeGetABIVersion(void) { return TVM_RUNTIME_ABI_VERSION; }

TVM_RUNTIME_DLL int TVMRuntimeCheckBackendABI(uint32_t backend_abi_version, char* err,
                                              size_t err_len) {
  if (TVMRuntimeABICompatible(TVM_RUNTIME_ABI_VERSION, backend_abi_version)) return 0;
  if (err != nullptr && err_len != 0) {
    std::string reason =
        tvm_runtime::backend::DescribeABIMismatch(backend_abi_version, TVM_RUNTIME_ABI_VERSION);
    std::snprintf(err, err_len, "%s", reason.c_str());
  }
  return 1;
}

TVM_RUNTIME_DLL int TVMRuntimeRegisterDeviceAPI(const TVMRuntimeDeviceAPI* api,
                                                int allow_override) {
  using namespace tvm_runtime::core;
  return tvm_runtime::backend::GuardCall([&] {
    Validate(api);
    // Copy into a zeroed full-size table so fields a smaller (older-minor) table lacks read NULL;
    // struct_size stays the backend's, so readers of newer fields can tell they were not set.
    auto* copy = new TVMRuntimeDeviceAPI();
    std::memcpy(copy, api, std::min(api->struct_size, sizeof(TVMRuntimeDeviceAPI)));
    copy->struct_size = std::min(api->struct_size, sizeof(TVMRuntimeDeviceAPI));
    Registry& reg = GetRegistry();
    std::lock_guard<std::mutex> lock(reg.mu);
    const TVMRuntimeDeviceAPI* existing = reg.slots[api->device_type].load();
    if (existing != nullptr && !allow_override) {
      delete copy;
      tvm_runtime::backend::ThrowError("RuntimeError",
                                       "device type " + DeviceTypeName(api->device_type) +
                                           " is already served by backend '" +
                                           (existing->name ? existing->name : "?") +
                                           "'; is a second copy of the backend installed?");
    }
    // An overridden table is deliberately leaked: other threads may still be reading it.
    reg.slots[api->device_type].store(copy, std::memory_order_release);
    reg.failures.erase(copy->device_type);
  });
}

TVM_RUNTIME_DLL const TVMRuntimeDeviceAPI* TVMRuntimeGetDeviceAPI(int32_t device_type) {
  return tvm_runtime::core::LookupDevice(device_type);
}

}  // extern "C"
