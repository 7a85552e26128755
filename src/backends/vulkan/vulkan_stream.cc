#include "vulkan_stream.h"

#include <tvm_runtime/backend/error.h>

#include <algorithm>

#include "vk_error.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

constexpr uint32_t kSetsPerDescriptorPool = 256;
constexpr uint32_t kStorageBuffersPerSet = 16;  // average; a pool that runs out is chained
constexpr VkDeviceSize kUniformChunkSize = 64 << 10;

}  // namespace

CommandStream::CommandStream(const VkDeviceFunctions& fns, VkDevice device, VkQueue queue,
                             uint32_t queue_family, const VkPhysicalDeviceLimits& limits,
                             MemoryAllocator* memory)
    : fns_(fns),
      device_(device),
      queue_(queue),
      uniform_alignment_(std::max<VkDeviceSize>(16, limits.minUniformBufferOffsetAlignment)),
      uniform_chunk_size_(std::min<VkDeviceSize>(kUniformChunkSize, limits.maxUniformBufferRange)),
      memory_(memory) {
  for (Batch& b : batches_) {
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool.queueFamilyIndex = queue_family;
    CheckVk(fns_.CreateCommandPool(device_, &pool, nullptr, &b.pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    alloc.commandPool = b.pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    CheckVk(fns_.AllocateCommandBuffers(device_, &alloc, &b.cmd), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    CheckVk(fns_.CreateFence(device_, &fence, nullptr, &b.fence), "vkCreateFence");
  }
}

VkCommandBuffer CommandStream::Record() {
  if (recording_ >= 0) return batches_[recording_].cmd;
  Batch& b = batches_[next_slot_];
  if (b.state == State::kInFlight) WaitFor(b.serial);  // the ring is full: wait for the oldest
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  CheckVk(fns_.BeginCommandBuffer(b.cmd, &begin), "vkBeginCommandBuffer");
  b.state = State::kRecording;
  b.serial = next_serial_++;
  b.commands = 0;
  recording_ = next_slot_;
  next_slot_ = (next_slot_ + 1) % kRingSize;
  return b.cmd;
}

void CommandStream::CommandDone() {
  ++counters_.commands;
  if (++batches_[recording_].commands >= kMaxCommandsPerBatch) Flush();
}

void CommandStream::Flush() {
  if (recording_ < 0) return;
  Batch& b = batches_[recording_];
  recording_ = -1;
  // Make every device write of the batch visible to host reads after the fence wait.
  VkMemoryBarrier to_host{};
  to_host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  fns_.CmdPipelineBarrier(b.cmd,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
  VkResult r = fns_.EndCommandBuffer(b.cmd);
  if (r == VK_SUCCESS) {
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &b.cmd;
    r = fns_.QueueSubmit(queue_, 1, &submit, b.fence);
  }
  if (r != VK_SUCCESS) {
    // Nothing of the batch will run: once the earlier batches are done, recycle it so the
    // stream stays usable, then report.
    try {
      WaitFor(b.serial - 1);
    } catch (...) {  // the device is probably lost; the submit error is the one to report
    }
    Retire(&b);
    ThrowVkError(r, "submitting Vulkan commands");
  }
  b.state = State::kInFlight;
  ++counters_.submits;
}

void CommandStream::WaitFor(uint64_t serial) {
  if (serial <= completed_) return;
  if (recording_ >= 0 && batches_[recording_].serial <= serial) Flush();
  while (completed_ < serial) {
    Batch* oldest = nullptr;
    for (Batch& b : batches_) {
      if (b.state == State::kInFlight && (oldest == nullptr || b.serial < oldest->serial)) {
        oldest = &b;
      }
    }
    if (oldest == nullptr) break;  // nothing left in flight: every serial so far has completed
    Retire(oldest);
  }
}

void CommandStream::Sync() {
  Flush();
  WaitFor(next_serial_ - 1);
}

void CommandStream::Retire(Batch* b) {
  if (b->state == State::kInFlight) {
    VkResult r = fns_.WaitForFences(device_, 1, &b->fence, kVkTrue, ~0ULL);
    if (r != VK_SUCCESS) ThrowVkError(r, "waiting for Vulkan commands to finish");
    CheckVk(fns_.ResetFences(device_, 1, &b->fence), "vkResetFences");
    ++counters_.fence_waits;
  }
  CheckVk(fns_.ResetCommandPool(device_, b->pool, 0), "vkResetCommandPool");
  for (VkDescriptorPool pool : b->descriptor_pools) fns_.ResetDescriptorPool(device_, pool, 0);
  b->descriptor_pool = 0;
  b->uniform_chunk = 0;
  b->uniform_used = 0;
  for (BufferDescriptor* buf : b->frees) memory_->Release(buf);
  b->frees.clear();
  b->state = State::kIdle;
  completed_ = std::max(completed_, b->serial);
}

CommandStream::Batch* CommandStream::Find(uint64_t serial) {
  for (Batch& b : batches_) {
    if (b.state != State::kIdle && b.serial == serial) return &b;
  }
  return nullptr;
}

void CommandStream::Free(BufferDescriptor* buf) {
  Batch* b = Completed(buf->last_use) ? nullptr : Find(buf->last_use);
  if (b == nullptr) {
    memory_->Release(buf);
  } else {
    b->frees.push_back(buf);
  }
}

VkDescriptorPool CommandStream::NewDescriptorPool() {
  VkDescriptorPoolSize sizes[2] = {
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerDescriptorPool * kStorageBuffersPerSet},
      {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kSetsPerDescriptorPool}};
  VkDescriptorPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  info.maxSets = kSetsPerDescriptorPool;
  info.poolSizeCount = 2;
  info.pPoolSizes = sizes;
  VkDescriptorPool pool = nullptr;
  CheckVk(fns_.CreateDescriptorPool(device_, &info, nullptr, &pool), "vkCreateDescriptorPool");
  return pool;
}

VkDescriptorSet CommandStream::AllocateDescriptorSet(VkDescriptorSetLayout layout) {
  Batch& b = batches_[recording_];
  for (;;) {
    bool fresh = false;
    if (b.descriptor_pool == b.descriptor_pools.size()) {
      b.descriptor_pools.push_back(NewDescriptorPool());
      fresh = true;
    }
    VkDescriptorSetAllocateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    info.descriptorPool = b.descriptor_pools[b.descriptor_pool];
    info.descriptorSetCount = 1;
    info.pSetLayouts = &layout;
    VkDescriptorSet set = nullptr;
    VkResult r = fns_.AllocateDescriptorSets(device_, &info, &set);
    if (r == VK_SUCCESS) return set;
    if ((r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) || fresh) {
      ThrowVkError(r, "vkAllocateDescriptorSets");
    }
    ++b.descriptor_pool;  // this pool is full: continue in the next one
  }
}

UniformSlice CommandStream::AllocateUniform(VkDeviceSize size) {
  Batch& b = batches_[recording_];
  const VkDeviceSize need = RoundUp(size, uniform_alignment_);
  while (b.uniform_chunk < b.uniforms.size() &&
         b.uniform_used + need > b.uniforms[b.uniform_chunk].size) {
    ++b.uniform_chunk;
    b.uniform_used = 0;
  }
  if (b.uniform_chunk == b.uniforms.size()) {
    b.uniforms.push_back(memory_->CreateHostBuffer(std::max(uniform_chunk_size_, need),
                                                   VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT));
  }
  HostBuffer& chunk = b.uniforms[b.uniform_chunk];
  UniformSlice slice{chunk.buffer, b.uniform_used, chunk.mapped + b.uniform_used};
  b.uniform_used += need;
  return slice;
}

}  // namespace vulkan
}  // namespace tvm_runtime
