#include "vulkan_device.h"

#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "vk_error.h"
#include "vulkan_runtime.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

// Copies larger than this go through the staging buffer in pieces.
constexpr VkDeviceSize kMaxStagingBytes = 64ULL << 20;
constexpr VkDeviceSize kMinStagingBytes = 1ULL << 20;

}  // namespace

VulkanDevice::VulkanDevice(const VulkanRuntime& runtime, const PhysicalDeviceInfo& info,
                           int32_t device_id)
    : info_(info), id_(device_id) {
  CreateLogicalDevice(runtime);
  memory_ = std::make_unique<MemoryAllocator>(fns_, device_, info_, id_);
  stream_ = std::make_unique<CommandStream>(fns_, device_, queue_, info_.queue_family,
                                            info_.props.limits, memory_.get());
  null_buffer_ = memory_->Allocate(256, 256);
}

void VulkanDevice::CreateLogicalDevice(const VulkanRuntime& runtime) {
  const uint32_t v = info_.api_version;
  std::vector<const char*> extensions;
  auto enable = [&](const char* name) {
    if (info_.HasExtension(name)) extensions.push_back(name);
  };
  if (!EnvFlag(kDisablePushDescriptorEnvVar)) enable("VK_KHR_push_descriptor");
  if (v < kVkApiVersion11) {
    enable("VK_KHR_storage_buffer_storage_class");
    if (info_.has_storage16) enable("VK_KHR_16bit_storage");
  }
  if (v < kVkApiVersion12) {
    if (info_.has_storage8) enable("VK_KHR_8bit_storage");
    if (info_.has_float16_int8) enable("VK_KHR_shader_float16_int8");
  }
  if (v < kVkApiVersion13 && info_.has_integer_dot_product) {
    enable("VK_KHR_shader_integer_dot_product");
  }

  // Enable every shader feature a TVM kernel may need that the device has: kernels are only
  // allowed to use features that were enabled at device creation.
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.features.shaderFloat64 = info_.features.shaderFloat64;
  features.features.shaderInt64 = info_.features.shaderInt64;
  features.features.shaderInt16 = info_.features.shaderInt16;
  VkPhysicalDevice8BitStorageFeatures storage8 = info_.storage8;
  VkPhysicalDevice16BitStorageFeatures storage16 = info_.storage16;
  storage16.storageInputOutput16 = kVkFalse;  // graphics only
  VkPhysicalDeviceShaderFloat16Int8Features float16_int8 = info_.float16_int8;
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{};
  dot.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES;
  dot.shaderIntegerDotProduct = info_.integer_dot_product ? kVkTrue : kVkFalse;
  void** tail = &features.pNext;
  if (info_.has_storage8) Chain(&tail, &storage8);
  if (info_.has_storage16) Chain(&tail, &storage16);
  if (info_.has_float16_int8) Chain(&tail, &float16_int8);
  if (info_.has_integer_dot_product) Chain(&tail, &dot);
  const bool use_features2 = features.pNext != nullptr;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{};
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = info_.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  create.pNext = use_features2 ? &features : nullptr;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  create.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  create.ppEnabledExtensionNames = extensions.data();
  create.pEnabledFeatures = use_features2 ? nullptr : &features.features;
  const VkInstanceFunctions& ifns = runtime.instance_functions();
  VkResult r = ifns.CreateDevice(info_.handle, &create, nullptr, &device_);
  if (r != VK_SUCCESS) {
    ThrowVkError(r, std::string("vkCreateDevice for '") + info_.props.deviceName + "'");
  }
  fns_ = LoadDeviceFunctions(ifns, device_);
  fns_.GetDeviceQueue(device_, info_.queue_family, 0, &queue_);
  push_descriptors_ = std::find(extensions.begin(), extensions.end(),
                                std::string("VK_KHR_push_descriptor")) != extensions.end() &&
                      fns_.CmdPushDescriptorSetKHR != nullptr;
}

BufferDescriptor* VulkanDevice::Allocate(uint64_t nbytes, uint64_t alignment) {
  std::lock_guard<std::mutex> lock(mu_);
  return memory_->Allocate(nbytes, alignment);
}

void VulkanDevice::Free(BufferDescriptor* buf) {
  std::lock_guard<std::mutex> lock(mu_);
  stream_->Free(buf);
}

void VulkanDevice::Sync() {
  std::lock_guard<std::mutex> lock(mu_);
  stream_->Sync();
}

std::pair<MemoryStats, CommandStream::Counters> VulkanDevice::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return {memory_->stats(), stream_->counters()};
}

void VulkanDevice::WaitIdleAtExit() {
  std::lock_guard<std::mutex> lock(mu_);
  fns_.DeviceWaitIdle(device_);
}

HostBuffer& VulkanDevice::Staging(VkDeviceSize nbytes) {
  if (staging_.size < nbytes) {
    // Every staging copy waits for its batch, so the old buffer is not in use any more.
    memory_->DestroyHostBuffer(&staging_);
    VkDeviceSize size = kMinStagingBytes;
    while (size < nbytes) size *= 2;
    staging_ = memory_->CreateHostBuffer(
        size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  }
  return staging_;
}

uint64_t VulkanDevice::RecordCopy(VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                                  VkDeviceSize dst_offset, VkDeviceSize nbytes) {
  VkCommandBuffer cmd = stream_->Record();
  const uint64_t serial = stream_->recording_serial();
  VkBufferCopy region{src_offset, dst_offset, nbytes};
  fns_.CmdCopyBuffer(cmd, src, dst, 1, &region);
  // Later kernels and copies see the copied bytes.
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  fns_.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                          1, &barrier, 0, nullptr, 0, nullptr);
  stream_->CommandDone();  // may submit the batch
  return serial;
}

void VulkanDevice::CopyFromHost(const void* src, BufferDescriptor* dst, uint64_t dst_offset,
                                uint64_t nbytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dst->host != nullptr) {
    // Fast path: wait only if pending work still uses the destination, then write in place.
    stream_->WaitFor(dst->last_use);
    std::memcpy(dst->host + dst_offset, src, nbytes);
    return;
  }
  const char* from = static_cast<const char*>(src);
  while (nbytes != 0) {
    const VkDeviceSize chunk = std::min<VkDeviceSize>(nbytes, kMaxStagingBytes);
    HostBuffer& staging = Staging(chunk);
    std::memcpy(staging.mapped, from, chunk);
    dst->last_use = RecordCopy(staging.buffer, 0, dst->buffer, dst->offset + dst_offset, chunk);
    stream_->WaitFor(dst->last_use);  // the staging buffer is reused by the next chunk
    from += chunk;
    dst_offset += chunk;
    nbytes -= chunk;
  }
}

void VulkanDevice::CopyToHost(BufferDescriptor* src, uint64_t src_offset, void* dst,
                              uint64_t nbytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (src->host != nullptr) {
    stream_->WaitFor(src->last_use);
    std::memcpy(dst, src->host + src_offset, nbytes);
    return;
  }
  char* to = static_cast<char*>(dst);
  while (nbytes != 0) {
    const VkDeviceSize chunk = std::min<VkDeviceSize>(nbytes, kMaxStagingBytes);
    HostBuffer& staging = Staging(chunk);
    src->last_use = RecordCopy(src->buffer, src->offset + src_offset, staging.buffer, 0, chunk);
    stream_->WaitFor(src->last_use);
    std::memcpy(to, staging.mapped, chunk);
    to += chunk;
    src_offset += chunk;
    nbytes -= chunk;
  }
}

void VulkanDevice::CopyOnDevice(BufferDescriptor* src, uint64_t src_offset, BufferDescriptor* dst,
                                uint64_t dst_offset, uint64_t nbytes) {
  const VkDeviceSize from = src->offset + src_offset, to = dst->offset + dst_offset;
  if (src->buffer == dst->buffer && from < to + nbytes && to < from + nbytes) {
    // vkCmdCopyBuffer forbids overlapping regions (two views of one tensor): bounce via host.
    std::vector<char> bounce(nbytes);
    CopyToHost(src, src_offset, bounce.data(), nbytes);
    CopyFromHost(bounce.data(), dst, dst_offset, nbytes);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  src->last_use = dst->last_use = RecordCopy(src->buffer, from, dst->buffer, to, nbytes);
}

}  // namespace vulkan
}  // namespace tvm_runtime
