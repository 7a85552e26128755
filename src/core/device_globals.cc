/*
 * Device-level globals used by the Python API and by compiled host code:
 * attributes, streams, __tvm_set_device, runtime.RuntimeEnabled and diagnostics helpers.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <string>

#include "core_init.h"
#include "device_registry.h"

namespace tvm_runtime {
namespace core {
namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::AnyView;
using ::tvm::ffi::String;

Any TakeAny(TVMFFIAny* raw) { return backend::TakeOwnedAny(raw); }

// Streams travel through Python as ints (apache-tvm) or as opaque pointers (ctypes).
void* AsStream(const AnyView& v) {
  if (v.type_index() == kTVMFFINone) return nullptr;
  if (auto p = v.as<void*>()) return *p;
  return reinterpret_cast<void*>(static_cast<intptr_t>(v.cast<int64_t>()));
}

Any GetDeviceAttr(int device_type, int device_id, int kind) {
  const TVMRuntimeDeviceAPI* api = LookupDevice(device_type);
  if (kind == kTVMRuntimeAttrExist && api == nullptr) return 0;  // Device.exist is just False
  const TVMRuntimeDeviceAPI& dev = api ? *api : RequireDevice(device_type);
  TVMFFIAny out{};
  out.type_index = kTVMFFINone;
  Check(dev.get_attr(dev.self, device_id, kind, &out));
  return TakeAny(&out);
}

bool RuntimeEnabled(const std::string& target) {
  auto starts = [&](const char* prefix) { return target.rfind(prefix, 0) == 0; };
  int device_type = -1;
  if (target == "cpu" || starts("llvm") || target == "c") {
    device_type = kDLCPU;
  } else if (target == "cuda" || target == "gpu" || starts("nvptx")) {
    device_type = kDLCUDA;
  } else if (target == "cl" || target == "opencl") {
    device_type = kDLOpenCL;
  } else if (target == "mtl" || target == "metal") {
    device_type = kDLMetal;
  } else if (target == "vulkan") {
    device_type = kDLVulkan;
  } else if (starts("rocm")) {
    device_type = kDLROCM;
  } else if (target == "hexagon") {
    device_type = kDLHexagon;
  } else if (target == "webgpu") {
    device_type = kDLWebGPU;
  } else {
    backend::ThrowError("ValueError", "runtime.RuntimeEnabled: unknown target '" + target + "'");
  }
  return LookupDevice(device_type) != nullptr;
}

String DriverStatus(int device_type) {
  const TVMRuntimeDeviceAPI& dev = RequireDevice(device_type);
  if (dev.driver_status == nullptr) return String("");
  TVMFFIAny out{};
  out.type_index = kTVMFFINone;
  Check(dev.driver_status(dev.self, &out));
  Any value = TakeAny(&out);
  if (value.type_index() == kTVMFFINone) return String("");
  return value.cast<String>();
}

}  // namespace

void RegisterDeviceGlobals() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      // Compiled GPU host code calls this before every kernel launch.
      .def("__tvm_set_device",
           [](int device_type, int device_id) {
             const TVMRuntimeDeviceAPI& dev = RequireDevice(device_type);
             Check(dev.set_device(dev.self, device_id));
           })
      .def("runtime.GetDeviceAttr", GetDeviceAttr)
      .def("runtime.Device_StreamCreate",
           [](DLDevice d) -> int64_t {
             const TVMRuntimeDeviceAPI& dev = RequireDevice(d.device_type);
             if (dev.stream_create == nullptr) return 0;  // the default stream
             void* stream = nullptr;
             Check(dev.stream_create(dev.self, d.device_id, &stream));
             return static_cast<int64_t>(reinterpret_cast<intptr_t>(stream));
           })
      .def("runtime.Device_StreamFree",
           [](DLDevice d, AnyView stream) {
             const TVMRuntimeDeviceAPI& dev = RequireDevice(d.device_type);
             void* s = AsStream(stream);
             if (dev.stream_free != nullptr && s != nullptr) {
               Check(dev.stream_free(dev.self, d.device_id, s));
             }
           })
      .def("runtime.Device_SetStream",
           [](DLDevice d, AnyView stream) {
             RequireDevice(d.device_type);
             Check(TVMFFIEnvSetStream(d.device_type, d.device_id, AsStream(stream), nullptr));
           })
      .def("runtime.TVMSetStream",
           [](int device_type, int device_id, AnyView stream) {
             Check(TVMFFIEnvSetStream(device_type, device_id, AsStream(stream), nullptr));
           })
      .def("runtime.Device_StreamSync",
           [](DLDevice d, AnyView stream) {
             const TVMRuntimeDeviceAPI& dev = RequireDevice(d.device_type);
             Check(dev.stream_sync(dev.self, d.device_id, AsStream(stream)));
           })
      .def("runtime.Device_StreamSyncFromTo",
           [](DLDevice d, AnyView src, AnyView dst) {
             const TVMRuntimeDeviceAPI& dev = RequireDevice(d.device_type);
             if (dev.stream_sync_from_to != nullptr) {
               Check(dev.stream_sync_from_to(dev.self, d.device_id, AsStream(src), AsStream(dst)));
             } else {
               Check(dev.stream_sync(dev.self, d.device_id, AsStream(src)));
             }
           })
      .def("runtime.RuntimeEnabled", RuntimeEnabled)
      .def("runtime.GetDeviceTargetProperty",
           [](DLDevice d, const std::string& key) -> Any {
             const TVMRuntimeDeviceAPI& dev = RequireDevice(d.device_type);
             if (dev.get_target_property == nullptr) return Any();
             TVMFFIAny out{};
             out.type_index = kTVMFFINone;
             Check(dev.get_target_property(dev.self, d.device_id, key.c_str(), &out));
             return TakeAny(&out);
           })
      // tvm-runtime specific: used by `python -m tvm.backend` and the backend loader.
      .def("runtime.DeviceDriverStatus", DriverStatus)
      .def("runtime.NoteBackendFailure", NoteBackendFailure)
      .def("runtime.RegisteredDeviceTypes",
           []() {
             ::tvm::ffi::Array<int64_t> out;
             for (int t = 1; t < kMaxDeviceType; ++t) {
               if (LookupDevice(t) != nullptr) out.push_back(t);
             }
             return out;
           })
      .def("runtime.DeviceTypeName", DeviceTypeName)
      .def("runtime.DistributionForDevice", DistributionForDevice);
}

}  // namespace core
}  // namespace tvm_runtime
