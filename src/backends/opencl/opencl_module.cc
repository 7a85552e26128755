#include "opencl_module.h"

#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/function_info.h>

#include <map>
#include <memory>
#include <utility>

#include "opencl_kernel.h"
#include "opencl_precompiled.h"
#include "opencl_program_cache.h"
#include "opencl_source.h"

namespace tvm_runtime {
namespace opencl {

namespace {

using backend::DeviceModuleHeader;
using backend::FunctionInfo;

class OpenCLModule final : public backend::DeviceModuleBase {
 public:
  OpenCLModule(std::string payload, DeviceModuleHeader header, std::string code,
               std::map<std::string, std::string> sources)
      : DeviceModuleBase("opencl", std::move(payload), std::move(header)), code_(std::move(code)) {
    for (auto& entry : sources) {
      kernels_.emplace(entry.first,
                       std::make_unique<OpenCLKernel>(entry.first, std::move(entry.second)));
    }
  }

  ::tvm::ffi::String InspectSource(const ::tvm::ffi::String& format) const final { return code_; }

 protected:
  ::tvm::ffi::Function MakeKernelFunction(const std::string& name, const FunctionInfo& info) final {
    return WrapLauncher(OpenCLLauncher(kernels_.at(name).get(), info));
  }

  ::tvm::ffi::Optional<::tvm::ffi::Function> GetModuleFunction(const std::string& name) final {
    auto self = ::tvm::ffi::GetObjectPtr<::tvm::ffi::Object>(this);
    if (name == "opencl.GetPreCompiledPrograms") {
      // apache-tvm returns the bytes as a str (what C++ callers such as MLC-LLM cast to); from
      // Python, where a str must be UTF-8, pass True to get bytes instead.
      return ::tvm::ffi::Function::FromPacked(
          [self, this](::tvm::ffi::PackedArgs args, ::tvm::ffi::Any* rv) {
            bool as_bytes = args.size() > 0 && args[0].cast<bool>();
            std::string bytes = GetPreCompiledPrograms();
            if (as_bytes) {
              *rv = ::tvm::ffi::Bytes(bytes);
            } else {
              *rv = ::tvm::ffi::String(bytes);
            }
          });
    }
    if (name == "opencl.SetPreCompiledPrograms") {
      return ::tvm::ffi::Function::FromTyped(
          [self, this](const std::string& bytes) { SetPreCompiledPrograms(bytes); },
          "opencl.SetPreCompiledPrograms");
    }
    return std::nullopt;
  }

 private:
  /* Every kernel built for the current device (from the cache or source), as its binary. */
  std::string GetPreCompiledPrograms() {
    const int32_t device_id = backend::CurrentDevice<kDeviceTypeOpenCL>();
    const ClDevice& device = OpenCLRuntime::Global().Device(device_id);
    PreCompiledPrograms programs;
    for (auto& entry : kernels_) {
      BuiltKernel* built = entry.second->Get(device_id, device);
      std::string binary = ProgramBinary(*built->cl, built->program);
      if (binary.empty()) {
        backend::ThrowError("RuntimeError",
                            "opencl.GetPreCompiledPrograms: the OpenCL driver of '" + device.name +
                                "' returned no binary for kernel '" + entry.first + "'");
      }
      programs.emplace_back(entry.first, std::move(binary));
    }
    return EncodePreCompiledPrograms(programs);
  }

  /* Builds the listed kernels for the current device from their binaries (kernels already built
   * there are kept; names this module does not have are ignored, as apache-tvm does). */
  void SetPreCompiledPrograms(const std::string& bytes) {
    PreCompiledPrograms programs = DecodePreCompiledPrograms(bytes);
    const int32_t device_id = backend::CurrentDevice<kDeviceTypeOpenCL>();
    const ClDevice& device = OpenCLRuntime::Global().Device(device_id);
    for (const auto& program : programs) {
      auto it = kernels_.find(program.first);
      if (it != kernels_.end()) it->second->Preload(device_id, device, program.second);
    }
  }

  std::string code_;
  std::map<std::string, std::unique_ptr<OpenCLKernel>> kernels_;
};

[[noreturn]] void RejectFormat(const std::string& fmt) {
  if (fmt == "xclbin" || fmt == "awsxclbin" || fmt == "aocx") {
    backend::ThrowError("ValueError",
                        "this artifact's OpenCL module holds a precompiled FPGA binary (format '" +
                            fmt +
                            "'), which tvm-runtime-opencl does not load: only OpenCL C source "
                            "modules (format 'cl', what target 'opencl' produces) are supported");
  }
  backend::ThrowError("ValueError", "unknown OpenCL module format '" + fmt +
                                        "' (expected 'cl'); the artifact was not written by "
                                        "apache-tvm 0.25-0.27 or is corrupted");
}

}  // namespace

::tvm::ffi::Module LoadOpenCLModule(std::string payload) {
  backend::BlobReader reader(payload.data(), payload.size(), "opencl");
  DeviceModuleHeader header = backend::ReadDeviceModuleHeader(&reader);
  std::string code = reader.ReadString();
  reader.ExpectEnd();
  if (header.fmt != "cl") RejectFormat(header.fmt);

  std::map<std::string, std::string> pieces = SplitKernelSources(code);
  if (pieces.size() == 1 && pieces.count("") != 0 && header.fmap.size() == 1) {
    // A source without "// Function:" markers holds the one kernel of the table.
    pieces[header.fmap.begin()->first] = std::move(pieces[""]);
    pieces.erase("");
  }
  std::map<std::string, std::string> sources;
  for (const auto& entry : header.fmap) {
    auto it = pieces.find(entry.first);
    if (it == pieces.end()) {
      reader.Fail("kernel '" + entry.first + "' of the function table has no '// Function: " +
                  entry.first + "' section in the OpenCL source");
    }
    sources.emplace(entry.first, std::move(it->second));
  }
  auto module = ::tvm::ffi::make_object<OpenCLModule>(std::move(payload), std::move(header),
                                                      std::move(code), std::move(sources));
  return ::tvm::ffi::Module(module);
}

}  // namespace opencl
}  // namespace tvm_runtime
