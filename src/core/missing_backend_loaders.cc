/*
 * Placeholder module loaders for device-module kinds whose backend is a separate wheel.
 *
 * Without them, loading an OpenCL artifact with only the core installed fails deep inside
 * tvm-ffi with "a loader of that name is not registered".  These placeholders instead name the
 * wheel to install (or why the installed one failed to load).  A backend replaces its
 * placeholder with the real loader when it registers.
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <string>

#include "core_init.h"
#include "device_registry.h"

namespace tvm_runtime {
namespace core {
namespace {

struct KindInfo {
  const char* kind;
  int device_type;  // 0: not served by any tvm-runtime backend
  const char* note;
};

constexpr KindInfo kDeviceKinds[] = {
    {"cuda", kDLCUDA, nullptr},
    {"opencl", kDLOpenCL, nullptr},
    {"vulkan", kDLVulkan, nullptr},
    {"metal", kDLMetal, nullptr},
    {"hip", kDLROCM, nullptr},
    {"hsaco", kDLROCM, nullptr},
    {"webgpu", 0, "WebGPU modules run only in TVM's web (wasm) runtime"},
};

[[noreturn]] void ThrowMissing(const KindInfo& info) {
  std::string prefix =
      std::string("Cannot load the '") + info.kind + "' module embedded in this artifact: ";
  if (info.device_type == 0) backend::ThrowError("RuntimeError", prefix + info.note + ".");
  try {
    RequireDevice(info.device_type);
  } catch (const ::tvm::ffi::Error& err) {
    backend::ThrowError("RuntimeError", prefix + err.message());
  }
  backend::ThrowError("RuntimeError",
                      prefix + "the " + DeviceTypeName(info.device_type) +
                          " backend is loaded but registered no loader for it; reinstall " +
                          DistributionForDevice(info.device_type));
}

}  // namespace

void RegisterMissingBackendLoaders() {
  for (const KindInfo& info : kDeviceKinds) {
    std::string name = std::string("ffi.Module.load_from_bytes.") + info.kind;
    if (::tvm::ffi::Function::GetGlobal(name).has_value()) continue;  // a real loader exists
    const KindInfo* captured = &info;
    ::tvm::ffi::Function::SetGlobal(name, ::tvm::ffi::Function::FromPacked(
                                              [captured](::tvm::ffi::PackedArgs, ::tvm::ffi::Any*) {
                                                ThrowMissing(*captured);
                                              }));
  }
}

}  // namespace core
}  // namespace tvm_runtime
