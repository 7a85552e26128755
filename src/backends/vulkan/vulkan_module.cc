#include "vulkan_module.h"

#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/function_info.h>
#include <tvm_runtime/backend/gpu/lazy_kernels.h>

#include <map>
#include <memory>
#include <utility>

#include "spirv_info.h"
#include "vulkan_kernel.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

using backend::DeviceModuleHeader;
using backend::FunctionInfo;

class VulkanModule final : public backend::DeviceModuleBase {
 public:
  VulkanModule(std::string payload, DeviceModuleHeader header,
               std::map<std::string, VulkanShader> shaders)
      : DeviceModuleBase("vulkan", std::move(payload), std::move(header)),
        shaders_(std::move(shaders)) {}

  /* A summary per kernel (SPIR-V is binary; spirv-dis of the payload shows the code). */
  ::tvm::ffi::String InspectSource(const ::tvm::ffi::String& format) const final {
    std::string out;
    for (const auto& entry : shaders_) {
      const std::string& name = entry.first;
      const VulkanShader& s = entry.second;
      out += "// Function: " + name + "\n// SPIR-V " + SpirvVersionString(s.spirv.version) + ", " +
             std::to_string(s.words.size()) + " words, scalars in " +
             (s.use_ubo() ? "a uniform buffer" : "push constants");
      if (const SpirvEntryPoint* e = s.spirv.FindCompute(name)) {
        if (e->has_local_size) {
          out += ", workgroup size (" + std::to_string(e->local_size[0]) + ", " +
                 std::to_string(e->local_size[1]) + ", " + std::to_string(e->local_size[2]) + ")";
        }
      }
      out += "\n";
    }
    return out;
  }

 protected:
  ::tvm::ffi::Function MakeKernelFunction(const std::string& name, const FunctionInfo& info) final {
    VulkanKernel* kernel = kernels_.Get(
        name, [&] { return std::make_unique<VulkanKernel>(name, shaders_.at(name), info); });
    return WrapLauncher(
        [kernel](const TVMFFIAny* args, int32_t num_args) { kernel->Launch(args, num_args); });
  }

 private:
  std::map<std::string, VulkanShader> shaders_;
  backend::LazyKernels<VulkanKernel> kernels_;
};

// One smap value: a serialized SPIRVShader, `u32 flag; vec<u32> words`.
VulkanShader ReadShader(const std::string& kernel, const std::string& bytes) {
  backend::BlobReader r(bytes.data(), bytes.size(), "vulkan (shader of kernel '" + kernel + "')");
  VulkanShader shader;
  shader.flag = r.Read<uint32_t>();
  shader.words = r.ReadVector<uint32_t>();
  r.ExpectEnd();
  return shader;
}

}  // namespace

::tvm::ffi::Module LoadVulkanModule(std::string payload) {
  backend::BlobReader reader(payload.data(), payload.size(), "vulkan");
  DeviceModuleHeader header = backend::ReadDeviceModuleHeader(&reader);
  std::map<std::string, std::string> smap;
  uint64_t n = reader.ReadCount(/*min bytes per entry=*/16, "the shader table");
  for (uint64_t i = 0; i < n; ++i) {
    std::string key = reader.ReadString();
    smap[key] = reader.ReadString();
  }
  reader.ExpectEnd();
  if (header.fmt != "vulkan") {
    backend::ThrowError("ValueError", "unknown Vulkan module format '" + header.fmt +
                                          "' (expected 'vulkan'); the artifact was not written by "
                                          "apache-tvm 0.25-0.27 or is corrupted");
  }
  std::map<std::string, VulkanShader> shaders;
  for (const auto& entry : header.fmap) {
    auto it = smap.find(entry.first);
    if (it == smap.end()) {
      reader.Fail("kernel '" + entry.first + "' of the function table has no SPIR-V shader");
    }
    VulkanShader shader = ReadShader(entry.first, it->second);
    shader.spirv = ParseSpirv(shader.words, entry.first);
    if (shader.spirv.FindCompute(entry.first) == nullptr) {
      std::string names;
      for (const SpirvEntryPoint& e : shader.spirv.entry_points) {
        names += (names.empty() ? "'" : ", '") + e.name + "'";
      }
      backend::ThrowError("ValueError",
                          "invalid SPIR-V for kernel '" + entry.first +
                              "': it has no GLCompute entry point named '" + entry.first +
                              "' (entry points: " + (names.empty() ? "none" : names) +
                              "). apache-tvm names each shader's entry point after its kernel.");
    }
    shaders.emplace(entry.first, std::move(shader));
  }
  auto module = ::tvm::ffi::make_object<VulkanModule>(std::move(payload), std::move(header),
                                                      std::move(shaders));
  return ::tvm::ffi::Module(module);
}

}  // namespace vulkan
}  // namespace tvm_runtime
