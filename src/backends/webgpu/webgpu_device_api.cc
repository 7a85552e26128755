#include "webgpu_device_api.h"

#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>

#include <algorithm>
#include <vector>

#include "webgpu_device.h"
#include "webgpu_runtime.h"

namespace tvm_runtime {
namespace webgpu {

namespace {

using backend::CopyDirection;
using ::tvm::ffi::Any;
using ::tvm::ffi::String;

WebGPURuntime& Runtime() { return WebGPURuntime::Global(); }

WebGPUBuffer* AsBuffer(const void* data) {
  return static_cast<WebGPUBuffer*>(const_cast<void*>(data));
}

void CheckRange(const WebGPUBuffer* buf, uint64_t offset, uint64_t nbytes, const char* side) {
  backend::CheckCopyRange(buf, buf != nullptr ? buf->size : 0, offset, nbytes, side, "WebGPU");
}

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

void WebGPUDeviceAPI::FreeData(int32_t device_id, void* data) {
  WebGPUBuffer* buf = AsBuffer(data);
  if (buf == nullptr || Runtime().shut_down()) return;  // at exit the library may be gone
  Runtime().Device(buf->device_id).Free(buf);
}

void WebGPUDeviceAPI::CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                               uint64_t nbytes, DLDevice dev_from, DLDevice dev_to,
                               DLDataType type_hint, void* stream) {
  CopyDirection dir = backend::ClassifyCopy(dev_from, dev_to, kDeviceTypeWebGPU, "WebGPU");
  if (nbytes == 0) return;
  WebGPURuntime& rt = Runtime();
  switch (dir) {
    case CopyDirection::kHostToDevice: {
      WebGPUBuffer* dst = AsBuffer(to);
      CheckRange(dst, to_offset, nbytes, "destination");
      rt.Device(dst->device_id)
          .CopyFromHost(static_cast<const char*>(from) + from_offset, dst, to_offset, nbytes);
      return;
    }
    case CopyDirection::kDeviceToHost: {
      WebGPUBuffer* src = AsBuffer(from);
      CheckRange(src, from_offset, nbytes, "source");
      rt.Device(src->device_id)
          .CopyToHost(src, from_offset, static_cast<char*>(to) + to_offset, nbytes);
      return;
    }
    case CopyDirection::kDeviceToDevice: {
      WebGPUBuffer* src = AsBuffer(from);
      WebGPUBuffer* dst = AsBuffer(to);
      CheckRange(src, from_offset, nbytes, "source");
      CheckRange(dst, to_offset, nbytes, "destination");
      if (src->device_id == dst->device_id) {
        rt.Device(src->device_id).CopyOnDevice(src, from_offset, dst, to_offset, nbytes);
      } else {
        std::vector<char> bounce(nbytes);  // two devices share no memory
        rt.Device(src->device_id).CopyToHost(src, from_offset, bounce.data(), nbytes);
        rt.Device(dst->device_id).CopyFromHost(bounce.data(), dst, to_offset, nbytes);
      }
      return;
    }
  }
}

void WebGPUDeviceAPI::StreamSync(int32_t device_id, void* stream) {
  WebGPURuntime& rt = Runtime();
  rt.Info(device_id);
  if (WebGPUDevice* d = rt.PeekDevice(device_id)) d->Sync();
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
