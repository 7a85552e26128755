/*
 * One kernel of a Vulkan module: its SPIR-V, the compute pipeline built lazily per device, and
 * the launch path that TVM host code reaches through the packed call
 *   [buffer handles...] [scalars...] [one int per launch tag]
 * Buffers bind as storage buffers 0..n-1 of descriptor set 0; scalars travel as 8-byte slots
 * (ArgUnion64) in push constants, or in a uniform buffer at binding n when the shader's flag
 * says so; the dispatch uses the grid dimensions only, the workgroup size is baked into the
 * shader.  A memory barrier follows every dispatch, so kernels see their predecessors' writes.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_KERNEL_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_KERNEL_H_

#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/per_device_cache.h>

#include <memory>
#include <string>
#include <vector>

#include "spirv_info.h"
#include "vk_api.h"

namespace tvm_runtime {
namespace vulkan {

class VulkanDevice;
struct BufferDescriptor;

/* Bit 0 of a shader's flag word: scalars live in a uniform buffer (apache-tvm's kUseUBO). */
constexpr uint32_t kShaderFlagUseUBO = 1U << 0;

struct VulkanShader {
  uint32_t flag = 0;
  std::vector<uint32_t> words;
  SpirvInfo spirv;
  bool use_ubo() const { return (flag & kShaderFlagUseUBO) != 0; }
};

/* Objects of one kernel on one device. */
struct VulkanPipeline {
  VulkanDevice* device = nullptr;
  VkShaderModule shader = nullptr;
  VkDescriptorSetLayout set_layout = nullptr;
  VkPipelineLayout layout = nullptr;
  VkPipeline pipeline = nullptr;
  ~VulkanPipeline();
};

class VulkanKernel {
 public:
  /* Checks the argument layout (buffers first, no CUDA-only tags); throws ValueError. */
  VulkanKernel(std::string name, VulkanShader shader, const backend::FunctionInfo& info);

  const std::string& name() const { return name_; }
  const VulkanShader& shader() const { return shader_; }
  const backend::KernelSignature& signature() const { return sig_; }
  size_t num_buffers() const { return num_buffers_; }
  size_t num_scalars() const { return sig_.args.size() - num_buffers_; }

  /* Builds on first use per device; throws RuntimeError when the device cannot run it. */
  VulkanPipeline* Get(VulkanDevice& device);

  /* Launches with the packed arguments of a TVM host call on the current device. */
  void Launch(const TVMFFIAny* args, int32_t num_args);

 private:
  std::unique_ptr<VulkanPipeline> Build(VulkanDevice& device) const;
  /* What the pipeline's layout depends on, for its persistent-cache key. */
  std::string PipelineLayoutText() const;
  void CheckTensorDevices(const TVMFFIAny* args) const;
  /* The buffer behind a handle argument (NULL binds a placeholder), checked for this launch. */
  BufferDescriptor* ResolveBuffer(VulkanDevice& device, size_t index, void* handle) const;
  void CheckDeviceSupport(const VulkanDevice& device) const;

  std::string name_;
  VulkanShader shader_;
  backend::KernelSignature sig_;
  size_t num_buffers_ = 0;
  backend::PerDeviceCache<VulkanPipeline> pipelines_;
};

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_KERNEL_H_
