#include "vulkan_kernel.h"

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/scratch_array.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "vk_error.h"
#include "vulkan_device.h"
#include "vulkan_memory.h"
#include "vulkan_pipeline_cache.h"
#include "vulkan_runtime.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

using backend::ArgKind;
using backend::ArgValue;

// Scalar slot size: apache-tvm packs every scalar into an 8-byte ArgUnion64.
constexpr uint32_t kScalarSlot = 8;

// SPIR-V capabilities a TVM kernel may declare that depend on optional device features.
bool DeviceHasCapability(const PhysicalDeviceInfo& d, uint32_t cap, const char** property) {
  switch (cap) {
    case 9:
      *property = "supports_float16";
      return d.has_float16_int8 && d.float16_int8.shaderFloat16;
    case 39:
      *property = "supports_int8";
      return d.has_float16_int8 && d.float16_int8.shaderInt8;
    case 10:
      *property = "supports_float64";
      return d.features.shaderFloat64;
    case 11:
      *property = "supports_int64";
      return d.features.shaderInt64;
    case 22:
      *property = "supports_int16";
      return d.features.shaderInt16;
    case 4433:
      *property = "supports_16bit_buffer";
      return d.has_storage16 && d.storage16.storageBuffer16BitAccess;
    case 4434:
      *property = "supports_16bit_buffer";
      return d.has_storage16 && d.storage16.uniformAndStorageBuffer16BitAccess;
    case 4435:
      *property = "supports_16bit_buffer";
      return d.has_storage16 && d.storage16.storagePushConstant16;
    case 4448:
      *property = "supports_8bit_buffer";
      return d.has_storage8 && d.storage8.storageBuffer8BitAccess;
    case 4449:
      *property = "supports_8bit_buffer";
      return d.has_storage8 && d.storage8.uniformAndStorageBuffer8BitAccess;
    case 4450:
      *property = "supports_8bit_buffer";
      return d.has_storage8 && d.storage8.storagePushConstant8;
    default:
      *property = nullptr;
      return true;  // core capabilities (Shader, ...) and ones the driver itself judges
  }
}

std::string Dims(const uint32_t* v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         ")";
}

/* The VkPipelineCache one pipeline is built with: seeded from the persistent cache when it
 * holds data for this kernel and device, stored back after a build that had no such data.
 * Without the persistent cache (disabled, or a driver without pipeline caches) handle() is
 * VK_NULL_HANDLE and the pipeline is built as before. */
class CachedPipelineBuild {
 public:
  CachedPipelineBuild(const VulkanDevice& device, backend::CacheKey key)
      : device_(device), cache_(PipelineCache()), key_(std::move(key)) {
    const VkDeviceFunctions& fns = device.fns();
    if (!cache_.enabled() || fns.CreatePipelineCache == nullptr ||
        fns.GetPipelineCacheData == nullptr || fns.DestroyPipelineCache == nullptr) {
      return;
    }
    std::string data;
    hit_ = cache_.Load(key_, &data, [&](const std::string& payload) {
      return CheckPipelineCacheHeader(payload, device.info());
    });
    VkPipelineCacheCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    info.initialDataSize = data.size();
    info.pInitialData = data.empty() ? nullptr : data.data();
    if (fns.CreatePipelineCache(device.handle(), &info, nullptr, &handle_) != VK_SUCCESS) {
      handle_ = nullptr;
      if (hit_) cache_.Rejected(key_, "vkCreatePipelineCache refused the data");
      hit_ = false;
    }
  }
  CachedPipelineBuild(const CachedPipelineBuild&) = delete;
  CachedPipelineBuild& operator=(const CachedPipelineBuild&) = delete;
  ~CachedPipelineBuild() {
    if (handle_ != nullptr) device_.fns().DestroyPipelineCache(device_.handle(), handle_, nullptr);
  }

  VkPipelineCache handle() const { return handle_; }

  void StoreIfNew() {
    if (handle_ == nullptr || hit_) return;
    const VkDeviceFunctions& fns = device_.fns();
    size_t size = 0;
    if (fns.GetPipelineCacheData(device_.handle(), handle_, &size, nullptr) != VK_SUCCESS) return;
    std::string data(size, '\0');
    VkResult r = fns.GetPipelineCacheData(device_.handle(), handle_, &size, &data[0]);
    if (r != VK_SUCCESS || size == 0) return;
    data.resize(size);
    cache_.Store(key_, data);
  }

 private:
  const VulkanDevice& device_;
  backend::PersistentCache cache_;
  backend::CacheKey key_;
  VkPipelineCache handle_ = nullptr;
  bool hit_ = false;
};

}  // namespace

VulkanPipeline::~VulkanPipeline() {
  if (device == nullptr || VulkanRuntime::Global().shut_down()) return;
  try {
    std::lock_guard<std::mutex> lock(device->mutex());
    device->stream().Sync();  // pending command buffers may still use the pipeline
  } catch (...) {             // a lost device: destroying is still the right thing to do
  }
  const VkDeviceFunctions& fns = device->fns();
  VkDevice d = device->handle();
  if (pipeline != nullptr) fns.DestroyPipeline(d, pipeline, nullptr);
  if (layout != nullptr) fns.DestroyPipelineLayout(d, layout, nullptr);
  if (set_layout != nullptr) fns.DestroyDescriptorSetLayout(d, set_layout, nullptr);
  if (shader != nullptr) fns.DestroyShaderModule(d, shader, nullptr);
}

VulkanKernel::VulkanKernel(std::string name, VulkanShader shader, const backend::FunctionInfo& info)
    : name_(std::move(name)), shader_(std::move(shader)), sig_(info) {
  for (int32_t tag : info.arg_extra_tags) {
    if (tag != 0) {
      backend::ThrowError("ValueError", "kernel '" + name_ +
                                            "' has an argument tagged as a CUDA tensor map, "
                                            "which Vulkan kernels cannot take");
    }
  }
  while (num_buffers_ < sig_.args.size() && sig_.args.kind(num_buffers_) == ArgKind::kHandle) {
    ++num_buffers_;
  }
  for (size_t i = num_buffers_; i < sig_.args.size(); ++i) {
    if (sig_.args.kind(i) == ArgKind::kHandle) {
      backend::ThrowError("ValueError", "kernel '" + name_ + "': buffer argument " +
                                            std::to_string(i) +
                                            " follows a scalar; Vulkan kernels take all buffers "
                                            "first (they bind by position)");
    }
  }
}

VulkanPipeline* VulkanKernel::Get(VulkanDevice& device) {
  return pipelines_.Get(device.id(), [&] { return Build(device); });
}

void VulkanKernel::CheckDeviceSupport(const VulkanDevice& device) const {
  const PhysicalDeviceInfo& d = device.info();
  const VkPhysicalDeviceLimits& limits = d.props.limits;
  const std::string where =
      "Vulkan kernel '" + name_ + "' cannot run on device '" + d.props.deviceName + "': ";
  if (shader_.spirv.version > d.MaxSpirvVersion()) {
    backend::ThrowError("RuntimeError", where + "it is SPIR-V " +
                                            SpirvVersionString(shader_.spirv.version) +
                                            ", the device accepts up to SPIR-V " +
                                            SpirvVersionString(d.MaxSpirvVersion()));
  }
  for (uint32_t cap : shader_.spirv.capabilities) {
    const char* property = nullptr;
    if (!DeviceHasCapability(d, cap, &property)) {
      backend::ThrowError("RuntimeError",
                          where + "it uses SPIR-V capability " + SpirvCapabilityName(cap) +
                              ", which the device lacks (" + property +
                              " is false). Compile the model for this device's target "
                              "(tvm.backend.vulkan.detect_target) or without that data type.");
    }
  }
  const SpirvEntryPoint* entry = shader_.spirv.FindCompute(name_);
  if (entry != nullptr && entry->has_local_size) {
    const uint32_t* ls = entry->local_size;
    uint64_t total = uint64_t{ls[0]} * ls[1] * ls[2];
    bool fits = total <= limits.maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; ++i) fits = fits && ls[i] <= limits.maxComputeWorkGroupSize[i];
    if (!fits) {
      backend::ThrowError("RuntimeError",
                          where + "its workgroup size " + Dims(ls) + " exceeds the device limits " +
                              Dims(limits.maxComputeWorkGroupSize) + ", at most " +
                              std::to_string(limits.maxComputeWorkGroupInvocations) +
                              " invocations");
    }
  }
  const uint64_t scalar_bytes = uint64_t{kScalarSlot} * num_scalars();
  if (shader_.use_ubo() ? scalar_bytes > limits.maxUniformBufferRange
                        : scalar_bytes > limits.maxPushConstantsSize) {
    backend::ThrowError("RuntimeError",
                        where + "its " + std::to_string(num_scalars()) + " scalar arguments need " +
                            std::to_string(scalar_bytes) + " bytes of " +
                            (shader_.use_ubo() ? "uniform buffer" : "push constants") +
                            ", the device allows " +
                            std::to_string(shader_.use_ubo() ? limits.maxUniformBufferRange
                                                             : limits.maxPushConstantsSize));
  }
  if (num_buffers_ > limits.maxPerStageDescriptorStorageBuffers) {
    backend::ThrowError("RuntimeError",
                        where + "it takes " + std::to_string(num_buffers_) +
                            " buffers, the device binds at most " +
                            std::to_string(limits.maxPerStageDescriptorStorageBuffers));
  }
}

std::unique_ptr<VulkanPipeline> VulkanKernel::Build(VulkanDevice& device) const {
  CheckDeviceSupport(device);
  const VkDeviceFunctions& fns = device.fns();
  VkDevice d = device.handle();
  auto p = std::make_unique<VulkanPipeline>();
  p->device = &device;
  const std::string what = "building Vulkan kernel '" + name_ + "'";

  VkShaderModuleCreateInfo module{};
  module.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module.codeSize = shader_.words.size() * sizeof(uint32_t);
  module.pCode = shader_.words.data();
  VkResult r = fns.CreateShaderModule(d, &module, nullptr, &p->shader);
  if (r != VK_SUCCESS) ThrowVkError(r, what + " (vkCreateShaderModule)");

  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (size_t i = 0; i <= num_buffers_; ++i) {
    if (i == num_buffers_ && !shader_.use_ubo()) break;
    VkDescriptorSetLayoutBinding b{};
    b.binding = static_cast<uint32_t>(i);
    b.descriptorType =
        i < num_buffers_ ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    b.descriptorCount = 1;
    b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings.push_back(b);
  }
  VkDescriptorSetLayoutCreateInfo set_layout{};
  set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  if (device.push_descriptors()) {
    set_layout.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  }
  set_layout.bindingCount = static_cast<uint32_t>(bindings.size());
  set_layout.pBindings = bindings.data();
  r = fns.CreateDescriptorSetLayout(d, &set_layout, nullptr, &p->set_layout);
  if (r != VK_SUCCESS) ThrowVkError(r, what + " (vkCreateDescriptorSetLayout)");

  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(kScalarSlot * num_scalars())};
  VkPipelineLayoutCreateInfo layout{};
  layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &p->set_layout;
  layout.pushConstantRangeCount = (!shader_.use_ubo() && num_scalars() != 0) ? 1 : 0;
  layout.pPushConstantRanges = &push;
  r = fns.CreatePipelineLayout(d, &layout, nullptr, &p->layout);
  if (r != VK_SUCCESS) ThrowVkError(r, what + " (vkCreatePipelineLayout)");

  VkComputePipelineCreateInfo pipeline{};
  pipeline.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  pipeline.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline.stage.module = p->shader;
  pipeline.stage.pName = name_.c_str();  // apache-tvm names the entry point after the kernel
  pipeline.layout = p->layout;
  pipeline.basePipelineIndex = -1;
  const std::string layout_text =
      PipelineLayoutText() + " push_descriptors=" + std::to_string(device.push_descriptors());
  CachedPipelineBuild cached(device, PipelineCacheKey(device.info(), name_, layout_text,
                                                      shader_.words.data(), shader_.words.size()));
  r = fns.CreateComputePipelines(d, cached.handle(), 1, &pipeline, nullptr, &p->pipeline);
  if (r != VK_SUCCESS) {
    p->pipeline = nullptr;
    ThrowVkError(r, what + " (vkCreateComputePipelines: the driver rejected the shader)");
  }
  cached.StoreIfNew();
  return p;
}

std::string VulkanKernel::PipelineLayoutText() const {
  return "buffers=" + std::to_string(num_buffers_) + " ubo=" + std::to_string(shader_.use_ubo()) +
         " scalar_bytes=" + std::to_string(kScalarSlot * num_scalars());
}

void VulkanKernel::CheckTensorDevices(const TVMFFIAny* args) const {
  // Tensors carry their device: catch a CPU (or other) tensor before its data pointer is taken
  // for a Vulkan buffer.  Opaque pointers are checked by BufferDescriptor::magic instead.
  for (size_t i = 0; i < num_buffers_; ++i) {
    const DLTensor* t = nullptr;
    if (args[i].type_index == kTVMFFIDLTensorPtr) {
      t = static_cast<const DLTensor*>(args[i].v_ptr);
    } else if (args[i].type_index == kTVMFFITensor) {
      t = reinterpret_cast<const DLTensor*>(reinterpret_cast<const char*>(args[i].v_obj) +
                                            sizeof(TVMFFIObject));
    }
    if (t != nullptr && t->device.device_type != kDeviceTypeVulkan) {
      backend::ThrowError("TypeError", "Vulkan kernel '" + name_ + "': argument " +
                                           std::to_string(i) + " is a tensor on device type " +
                                           std::to_string(t->device.device_type) +
                                           "; Vulkan kernels take Vulkan buffers");
    }
  }
}

BufferDescriptor* VulkanKernel::ResolveBuffer(VulkanDevice& device, size_t index,
                                              void* handle) const {
  BufferDescriptor* b =
      handle != nullptr ? static_cast<BufferDescriptor*>(handle) : device.null_buffer();
  const std::string arg = "Vulkan kernel '" + name_ + "': argument " + std::to_string(index);
  if (b->magic != BufferDescriptor::kMagic) {
    backend::ThrowError("ValueError", arg +
                                          " is not a Vulkan buffer (pass the data of a tensor "
                                          "allocated on a Vulkan device)");
  }
  if (b->device_id != device.id()) {
    backend::ThrowError("ValueError", arg + " lives on vulkan(" + std::to_string(b->device_id) +
                                          ") but the kernel runs on vulkan(" +
                                          std::to_string(device.id()) + ")");
  }
  const VkDeviceSize max_range = device.info().props.limits.maxStorageBufferRange;
  if (b->size > max_range) {
    backend::ThrowError("ValueError", arg + " has " + std::to_string(b->size) +
                                          " bytes, more than the device's maxStorageBufferRange (" +
                                          std::to_string(max_range) + ")");
  }
  return b;
}

void VulkanKernel::Launch(const TVMFFIAny* args, int32_t num_args) {
  sig_.CheckArity(num_args);
  VulkanRuntime& rt = VulkanRuntime::Global();
  if (rt.shut_down()) backend::ThrowError("RuntimeError", "the Vulkan runtime has shut down");
  VulkanDevice& device = rt.Device(backend::CurrentDevice<kDeviceTypeVulkan>());
  VulkanPipeline* p = Get(device);

  backend::ScratchArray<ArgValue> values(sig_.args.size());
  CheckTensorDevices(args);
  sig_.args.Convert(args, values.data());

  const backend::LaunchDims dims = sig_.plan.Extract(args);
  const VkPhysicalDeviceLimits& limits = device.info().props.limits;
  uint32_t grid[3];
  for (int i = 0; i < 3; ++i) {
    if (dims.grid(i) > limits.maxComputeWorkGroupCount[i]) {
      backend::ThrowError("ValueError", "Vulkan kernel '" + name_ + "': grid dimension " +
                                            std::to_string(i) + " is " +
                                            std::to_string(dims.grid(i)) + ", the device allows " +
                                            std::to_string(limits.maxComputeWorkGroupCount[i]));
    }
    grid[i] = static_cast<uint32_t>(dims.grid(i));
  }

  // One descriptor per buffer (bindings 0..n-1), plus the scalars' uniform buffer on the UBO
  // path (binding n, filled in once the batch's uniform space is known).
  const size_t num_bindings = num_buffers_ + (shader_.use_ubo() ? 1 : 0);
  backend::ScratchArray<BufferDescriptor*> buffers(num_buffers_);
  backend::ScratchArray<VkDescriptorBufferInfo> infos(num_bindings);
  backend::ScratchArray<VkWriteDescriptorSet> writes(num_bindings);
  for (size_t i = 0; i < num_bindings; ++i) {
    if (i < num_buffers_) {
      BufferDescriptor* b = ResolveBuffer(device, i, values[i].v_handle);
      buffers[i] = b;
      infos[i] = VkDescriptorBufferInfo{b->buffer, b->offset, b->size != 0 ? b->size : b->reserved};
    }
    VkWriteDescriptorSet& w = writes[i];
    w = VkWriteDescriptorSet{};
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstBinding = static_cast<uint32_t>(i);
    w.descriptorCount = 1;
    w.descriptorType =
        i < num_buffers_ ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    w.pBufferInfo = &infos[i];
  }
  const uint32_t scalar_bytes = static_cast<uint32_t>(kScalarSlot * num_scalars());
  const void* scalars = values.data() + num_buffers_;  // ArgValue is the 8-byte slot layout

  const VkDeviceFunctions& fns = device.fns();
  std::lock_guard<std::mutex> lock(device.mutex());
  CommandStream& stream = device.stream();
  VkCommandBuffer cmd = stream.Record();
  const uint64_t serial = stream.recording_serial();
  if (shader_.use_ubo()) {
    const uint32_t size = std::max<uint32_t>(scalar_bytes, kScalarSlot);
    UniformSlice slice = stream.AllocateUniform(size);
    std::memcpy(slice.host, scalars, scalar_bytes);
    infos[num_buffers_] = VkDescriptorBufferInfo{slice.buffer, slice.offset, size};
  }
  fns.CmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
  const uint32_t count = static_cast<uint32_t>(num_bindings);
  if (device.push_descriptors()) {
    fns.CmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, count,
                                writes.data());
  } else if (count != 0) {
    VkDescriptorSet set = stream.AllocateDescriptorSet(p->set_layout);
    for (size_t i = 0; i < num_bindings; ++i) writes[i].dstSet = set;
    fns.UpdateDescriptorSets(device.handle(), count, writes.data(), 0, nullptr);
    fns.CmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0,
                              nullptr);
  }
  if (!shader_.use_ubo() && scalar_bytes != 0) {
    fns.CmdPushConstants(cmd, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, scalar_bytes, scalars);
  }
  fns.CmdDispatch(cmd, grid[0], grid[1], grid[2]);
  // Later kernels and copies see this kernel's writes (and do not overwrite what it reads).
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  fns.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         1, &barrier, 0, nullptr, 0, nullptr);
  for (size_t i = 0; i < num_buffers_; ++i) buffers[i]->last_use = serial;
  stream.CommandDone();  // may submit the batch
}

}  // namespace vulkan
}  // namespace tvm_runtime
