#include "webgpu_device_api.h"

#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <vector>

#include "webgpu_device.h"
#include "webgpu_runtime.h"

namespace tvm_runtime {
namespace webgpu {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::String;

WebGPURuntime& Runtime() { return WebGPURuntime::Global(); }

}  // namespace

void WebGPUDeviceAPI::SelectDevice(int32_t device_id) {
  Runtime().Info(device_id);  // validates, and opens wgpu-native on first use
}

Any WebGPUDeviceAPI::DeviceAttr(int32_t device_id, int32_t kind) {
  WebGPURuntime& rt = Runtime();
  const AdapterInfo& a = rt.Info(device_id);
  const WGPULimits& l = a.limits;
  switch (kind) {
    case kTVMRuntimeAttrMaxThreadsPerBlock:
      return static_cast<int64_t>(l.maxComputeInvocationsPerWorkgroup);
    case kTVMRuntimeAttrWarpSize:
      return static_cast<int64_t>(1);  // TVM's webgpu target: no subgroup-level reductions
    case kTVMRuntimeAttrMaxSharedMemoryPerBlock:
      return static_cast<int64_t>(l.maxComputeWorkgroupStorageSize);
    case kTVMRuntimeAttrComputeVersion:
      return String(std::string(a.BackendName()) + ", wgpu-native " + GetWgpuLibrary().version);
    case kTVMRuntimeAttrDeviceName:
      return String(a.name + " (" + a.BackendName() + ", " + a.TypeName() + ")");
    case kTVMRuntimeAttrMaxThreadDimensions: {
      uint32_t dims[3] = {l.maxComputeWorkgroupSizeX, l.maxComputeWorkgroupSizeY,
                          l.maxComputeWorkgroupSizeZ};
      return String(backend::JsonIntList(dims, 3));
    }
    case kTVMRuntimeAttrDriverVersion:
      return String(a.description);
    default:
      // WebGPU exposes no clock rate, core count, cache or memory sizes.
      return Any();
  }
}

void* WebGPUDeviceAPI::AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                                 DLDataType type_hint) {
  return Runtime().Device(device_id).Allocate(nbytes);
}

Any WebGPUDeviceAPI::DeviceTargetProperty(int32_t device_id, const std::string& key) {
  WebGPURuntime& rt = Runtime();
  const AdapterInfo& a = rt.Info(device_id);
  if (key == "supports_float16") return a.shader_f16 && !FeatureDisabled("shader-f16");
  if (key == "max_num_threads") {
    return static_cast<int64_t>(
        std::min<uint32_t>(a.limits.maxComputeInvocationsPerWorkgroup, 1024));
  }
  if (key == "max_shared_memory_per_block") {
    return static_cast<int64_t>(a.limits.maxComputeWorkgroupStorageSize);
  }
  if (key == "thread_warp_size") return static_cast<int64_t>(1);
  if (key == "supports_subgroups") return false;
  return Any();
}

}  // namespace webgpu
}  // namespace tvm_runtime
