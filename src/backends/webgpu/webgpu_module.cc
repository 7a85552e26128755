#include "webgpu_module.h"

#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/device_module.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/function_info.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "webgpu_kernel.h"

namespace tvm_runtime {
namespace webgpu {

namespace {

using backend::DeviceModuleHeader;
using backend::FunctionInfo;

class WebGPUModule final : public backend::DeviceModuleBase {
 public:
  WebGPUModule(std::string payload, DeviceModuleHeader header,
               std::map<std::string, std::string> wgsl)
      : DeviceModuleBase("webgpu", std::move(payload), std::move(header)), wgsl_(std::move(wgsl)) {}

  /* The WGSL of every kernel ("wgsl" or ""), as apache-tvm's inspect_source shows it. */
  ::tvm::ffi::String InspectSource(const ::tvm::ffi::String& format) const final {
    if (!format.empty() && format != "wgsl") return ::tvm::ffi::String();
    std::string out;
    for (const auto& entry : wgsl_) out += entry.second;
    return out;
  }

 protected:
  ::tvm::ffi::Function MakeKernelFunction(const std::string& name, const FunctionInfo& info) final {
    WebGPUKernel* kernel = GetKernel(name, info);
    return WrapLauncher(
        [kernel](const TVMFFIAny* args, int32_t num_args) { kernel->Launch(args, num_args); });
  }

 private:
  // Made on first lookup, so a kernel this runtime cannot serve fails only when it is used.
  WebGPUKernel* GetKernel(const std::string& name, const FunctionInfo& info) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(name);
    if (it == kernels_.end()) {
      it = kernels_.emplace(name, std::make_unique<WebGPUKernel>(name, wgsl_.at(name), info)).first;
    }
    return it->second.get();
  }

  std::map<std::string, std::string> wgsl_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<WebGPUKernel>> kernels_;
};

}  // namespace

::tvm::ffi::Module LoadWebGPUModule(std::string payload) {
  backend::BlobReader reader(payload.data(), payload.size(), "webgpu");
  DeviceModuleHeader header;
  header.fmt = "wgsl";
  uint64_t n = reader.ReadCount(/*min bytes per entry=*/8, "the function table");
  for (uint64_t i = 0; i < n; ++i) {
    std::string key = reader.ReadString();
    header.fmap[key] = backend::ReadFunctionInfo(&reader);
  }
  std::map<std::string, std::string> wgsl;
  uint64_t m = reader.ReadCount(/*min bytes per entry=*/16, "the shader table");
  for (uint64_t i = 0; i < m; ++i) {
    std::string key = reader.ReadString();
    wgsl[key] = reader.ReadString();
  }
  reader.ExpectEnd();
  for (const auto& entry : header.fmap) {
    if (wgsl.find(entry.first) == wgsl.end()) {
      reader.Fail("kernel '" + entry.first + "' of the function table has no WGSL source");
    }
  }
  auto module =
      ::tvm::ffi::make_object<WebGPUModule>(std::move(payload), std::move(header), std::move(wgsl));
  return ::tvm::ffi::Module(module);
}

}  // namespace webgpu
}  // namespace tvm_runtime
