#include "metal_module.h"

#include <tvm/ffi/container/map.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/function_info.h>

#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include "metal_kernel.h"

namespace tvm_runtime {
namespace metal {

namespace {

using backend::DeviceModuleHeader;
using backend::FunctionInfo;

class MetalModule final : public backend::DeviceModuleBase {
 public:
  MetalModule(std::string payload, DeviceModuleHeader header,
              std::map<std::string, std::string> code)
      : DeviceModuleBase("metal", std::move(payload), std::move(header)) {
    const bool is_metallib = this->header().fmt == "metallib";
    for (auto& entry : code) {
      if (!is_metallib) source_ += "// Function: " + entry.first + "\n" + entry.second + "\n";
      kernels_.emplace(entry.first, std::make_unique<MetalKernel>(
                                        entry.first, std::move(entry.second), is_metallib));
    }
  }

  /* The MSL of every kernel ("" for a metallib module, which holds no source). */
  ::tvm::ffi::String InspectSource(const ::tvm::ffi::String& format) const final { return source_; }

 protected:
  ::tvm::ffi::Function MakeKernelFunction(const std::string& name, const FunctionInfo& info) final {
    return WrapLauncher(MetalLauncher(kernels_.at(name).get(), info));
  }

 private:
  std::string source_;
  std::map<std::string, std::unique_ptr<MetalKernel>> kernels_;
};

[[noreturn]] void RejectFormat(backend::BlobReader* reader, const std::string& fmt) {
  reader->Fail("unknown Metal module format '" + backend::Printable(fmt) +
               "' (apache-tvm 0.27 writes 'metal' for MSL source or 'metallib'); the artifact "
               "was not written by apache-tvm 0.25-0.27 or is corrupted");
}

}  // namespace

::tvm::ffi::Module LoadMetalModule(std::string payload) {
  backend::BlobReader reader(payload.data(), payload.size(), "metal");
  DeviceModuleHeader header = backend::ReadDeviceModuleHeader(&reader);
  if (header.fmt != "metal" && header.fmt != "metallib") RejectFormat(&reader, header.fmt);
  std::map<std::string, std::string> code;
  uint64_t n = reader.ReadCount(/*min bytes per entry=*/16, "the kernel code map");
  for (uint64_t i = 0; i < n; ++i) {
    std::string name = reader.ReadString();
    code[name] = reader.ReadString();
  }
  reader.ExpectEnd();
  for (const auto& entry : header.fmap) {
    auto it = code.find(entry.first);
    if (it == code.end()) {
      reader.Fail("kernel '" + backend::Printable(entry.first) +
                  "' of the function table has no code in the module");
    }
    if (header.fmt == "metal" && std::memchr(it->second.data(), 0, it->second.size())) {
      reader.Fail("the MSL source of kernel '" + backend::Printable(entry.first) +
                  "' holds a NUL byte");
    }
  }
  auto module =
      ::tvm::ffi::make_object<MetalModule>(std::move(payload), std::move(header), std::move(code));
  return ::tvm::ffi::Module(module);
}

void RegisterMetalModuleFactory() {
  backend::SetGlobalPackedFunction(
      "ffi.Module.create.metal", [](::tvm::ffi::PackedArgs args, ::tvm::ffi::Any* rv) {
        if (args.size() < 3 || args.size() > 4) {
          backend::ThrowError("TypeError",
                              "ffi.Module.create.metal(smap, fmt, fmap[, source]) takes 3 or 4 "
                              "arguments, got " +
                                  std::to_string(args.size()));
        }
        auto smap = args[0].cast<::tvm::ffi::Map<::tvm::ffi::String, ::tvm::ffi::Bytes>>();
        auto fmt = args[1].cast<::tvm::ffi::String>();
        auto fmap = args[2].cast<::tvm::ffi::Bytes>();
        // The payload apache-tvm would write for these kernels, so the module saves as one.
        auto put_u64 = [](std::string* out, uint64_t v) {
          for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
        };
        std::string payload;
        put_u64(&payload, fmt.size());
        payload.append(fmt.data(), fmt.size());
        payload.append(fmap.data(), fmap.size());
        put_u64(&payload, smap.size());
        for (const auto& kv : smap) {
          put_u64(&payload, kv.first.size());
          payload.append(kv.first.data(), kv.first.size());
          put_u64(&payload, kv.second.size());
          payload.append(kv.second.data(), kv.second.size());
        }
        *rv = LoadMetalModule(std::move(payload));
      });
}

}  // namespace metal
}  // namespace tvm_runtime
