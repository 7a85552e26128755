#include "rocm_module.h"

#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <utility>

#include "hip_error.h"
#include "rocm_launcher.h"
#include "rocm_runtime.h"

namespace tvm_runtime {
namespace rocm {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::Map;
using ::tvm::ffi::String;

[[noreturn]] void RejectFormat(const std::string& fmt) {
  backend::ThrowError("ValueError",
                      "unknown ROCm module format '" + fmt +
                          "' (expected 'hsaco', an AMDGPU code object); the artifact was not "
                          "written by apache-tvm 0.27 or is corrupted");
}

[[noreturn]] void ThrowArchMismatch(const CodeObjectInfo& info, const RocmDevice& device,
                                    const std::string& why) {
  backend::ThrowError("RuntimeError", "cannot load the ROCm kernels of this artifact on " +
                                          device.Describe() + ": " + why +
                                          ". Re-export the model for this GPU: tvm.compile(..., "
                                          "target=tvm.target.Target({\"kind\": "
                                          "\"rocm\", \"mcpu\": \"" +
                                          BaseProcessor(device.gcn_arch) +
                                          "\"}, host=\"llvm\")) (code object target " +
                                          info.TargetId() + ")");
}

}  // namespace

HipImage::~HipImage() {
  // Failures only happen at runtime shutdown; there is nothing to do about them then.
  if (module != nullptr) api->ModuleUnload(module);
}

RocmModule::RocmModule(std::string payload, backend::KernelImagePayload parsed,
                       CodeObjectInfo code_object)
    : KernelImageModule("hip", std::move(payload), std::move(parsed)),
      code_object_(std::move(code_object)) {}

::tvm::ffi::Function RocmModule::MakeKernelFunction(const std::string& name,
                                                    const backend::FunctionInfo& info) {
  return WrapLauncher(RocmLauncher(this, KernelIndex(name), info));
}

std::unique_ptr<HipImage> RocmModule::Load(int32_t device_id) {
  RocmRuntime& rt = RocmRuntime::Global();
  RocmDevice& dev = rt.Device(device_id);
  std::string why = ArchMismatch(code_object_, dev.gcn_arch);
  if (!why.empty()) ThrowArchMismatch(code_object_, dev, why);
  const HipApi& api = rt.api();
  rt.MakeCurrent(dev);
  auto image = std::make_unique<HipImage>();
  image->api = &api;
  image->device_id = device_id;
  hipError_t rc = api.ModuleLoadData(&image->module, code().data());
  if (rc != hipSuccess) {
    image->module = nullptr;
    ThrowHipError(rc, "hipModuleLoadData of the ROCm code object (" + code_object_.TargetId() +
                          ", code object v" + std::to_string(code_object_.code_object_version) +
                          ") on " + dev.Describe());
  }
  image->functions = backend::ResolveKernels<hipFunction_t>(
      kernel_names(), [&](const std::string& name, hipFunction_t* f) {
        hipError_t found = api.ModuleGetFunction(f, image->module, name.c_str());
        if (found == hipErrorNotFound || found == hipErrorInvalidDeviceFunction) return false;
        CheckHip(found, "hipModuleGetFunction('" + name + "')");
        return true;
      });
  return image;
}

::tvm::ffi::Module LoadRocmModule(std::string payload) {
  backend::KernelImagePayload parsed = backend::ParseKernelImagePayload(payload, "hip");
  if (parsed.header.fmt != "hsaco") RejectFormat(parsed.header.fmt);
  CodeObjectInfo code_object = ParseCodeObject(parsed.code);
  auto module = ::tvm::ffi::make_object<RocmModule>(std::move(payload), std::move(parsed),
                                                    std::move(code_object));
  return ::tvm::ffi::Module(module);
}

Map<String, Any> DescribeCodeObject(const std::string& image) {
  CodeObjectInfo info = ParseCodeObject(image);
  Map<String, Any> out;
  out.Set("processor", String(info.processor));
  out.Set("target_id", String(info.TargetId()));
  out.Set("xnack", String(info.xnack));
  out.Set("sramecc", String(info.sramecc));
  out.Set("code_object_version", static_cast<int64_t>(info.code_object_version));
  out.Set("generic", info.generic);
  out.Set("bytes", static_cast<int64_t>(image.size()));
  return out;
}

Map<String, Any> DescribeRocmModule(const ::tvm::ffi::Module& module) {
  const RocmModule& rocm = backend::ModuleLoadedBy<RocmModule>(module, "tvm-runtime-rocm");
  Map<String, Any> out = backend::DescribeFunctionTable(rocm.header());
  out.Set("code_object", DescribeCodeObject(rocm.code()));
  return out;
}

}  // namespace rocm
}  // namespace tvm_runtime
