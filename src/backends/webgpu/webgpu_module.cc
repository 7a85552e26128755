#include "webgpu_module.h"

#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/function_info.h>
#include <tvm_runtime/backend/gpu/lazy_kernels.h>
#include <tvm_runtime/backend/message_text.h>

#include <map>
#include <memory>
#include <utility>

#include "webgpu_kernel.h"

namespace tvm_runtime {
namespace webgpu {

namespace {

using backend::DeviceModuleHeader;
using backend::FunctionInfo;

// Far above any kernel 0.27's codegen writes (tens of KB); a corrupted length is refused here
// instead of being handed to the shader compiler.
constexpr size_t kMaxWgslBytes = size_t{8} << 20;

/* wgpu-native reads shader text, labels and entry points as Rust strings: a byte that is not
 * UTF-8 makes it panic, and a panic there aborts the process.  So every string of the payload
 * that reaches it is checked at load. */
void CheckUtf8(const backend::BlobReader& reader, const std::string& text,
               const std::string& what) {
  size_t bad = backend::FindInvalidUtf8(text);
  if (bad == std::string::npos) return;
  static const char kHex[] = "0123456789abcdef";
  unsigned char c = static_cast<unsigned char>(text[bad]);
  reader.Fail(what + " is not valid UTF-8 (byte 0x" + kHex[c >> 4] + kHex[c & 0xF] + " at offset " +
              std::to_string(bad) + " of its " + std::to_string(text.size()) + " bytes)");
}

std::string KernelLabel(const std::string& name) {
  return "kernel '" + backend::Printable(name) + "'";
}

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
    WebGPUKernel* kernel = kernels_.Get(
        name, [&] { return std::make_unique<WebGPUKernel>(name, wgsl_.at(name), info); });
    return WrapLauncher(
        [kernel](const TVMFFIAny* args, int32_t num_args) { kernel->Launch(args, num_args); });
  }

 private:
  std::map<std::string, std::string> wgsl_;
  backend::LazyKernels<WebGPUKernel> kernels_;
};

}  // namespace

::tvm::ffi::Module LoadWebGPUModule(std::string payload) {
  backend::BlobReader reader(payload.data(), payload.size(), "webgpu");
  DeviceModuleHeader header;
  header.fmt = "wgsl";
  uint64_t n = reader.ReadCount(/*min bytes per entry=*/8, "the function table");
  for (uint64_t i = 0; i < n; ++i) {
    std::string key = reader.ReadString();
    CheckUtf8(reader, key, "the name of function-table entry " + std::to_string(i));
    header.fmap[key] = backend::ReadFunctionInfo(&reader);
  }
  std::map<std::string, std::string> wgsl;
  uint64_t m = reader.ReadCount(/*min bytes per entry=*/16, "the shader table");
  for (uint64_t i = 0; i < m; ++i) {
    std::string key = reader.ReadString();
    CheckUtf8(reader, key, "the name of shader-table entry " + std::to_string(i));
    std::string source = reader.ReadString();
    if (source.size() > kMaxWgslBytes) {
      reader.Fail("the WGSL source of " + KernelLabel(key) + " is " +
                  std::to_string(source.size()) + " bytes, over the limit of " +
                  std::to_string(kMaxWgslBytes));
    }
    CheckUtf8(reader, source, "the WGSL source of " + KernelLabel(key));
    wgsl[key] = std::move(source);
  }
  reader.ExpectEnd();
  for (const auto& entry : header.fmap) {
    if (wgsl.find(entry.first) == wgsl.end()) {
      reader.Fail(KernelLabel(entry.first) + " of the function table has no WGSL source");
    }
  }
  auto module =
      ::tvm::ffi::make_object<WebGPUModule>(std::move(payload), std::move(header), std::move(wgsl));
  return ::tvm::ffi::Module(module);
}

}  // namespace webgpu
}  // namespace tvm_runtime
