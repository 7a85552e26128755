/*
 * Batched command submission for one device.
 *
 * Kernel launches and device copies are recorded into the current command buffer instead of
 * being submitted one by one; a batch is submitted when the host needs results (a copy to the
 * host, Device.sync, a host write to a buffer still in use) or when it grows past
 * kMaxCommandsPerBatch.  Up to kRingSize batches can be in flight while the next one records.
 *
 * Every batch has a serial.  Buffers remember the serial of the last batch that used them
 * (BufferDescriptor::last_use), so the host waits only when it touches a buffer that pending
 * work still reads or writes, and freed buffers go back to the allocator only once that batch
 * has completed.  Per-batch resources (descriptor pools, uniform-buffer space for scalar
 * arguments) are recycled when the batch retires.
 *
 * Not thread-safe: the owning VulkanDevice serializes every call with its mutex.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_STREAM_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_STREAM_H_

#include <array>
#include <cstdint>
#include <vector>

#include "vk_api.h"
#include "vk_library.h"
#include "vulkan_memory.h"

namespace tvm_runtime {
namespace vulkan {

/* Space for the scalar arguments of one UBO-path launch. */
struct UniformSlice {
  VkBuffer buffer = nullptr;
  VkDeviceSize offset = 0;
  char* host = nullptr;
};

class CommandStream {
 public:
  static constexpr int kRingSize = 3;
  static constexpr uint32_t kMaxCommandsPerBatch = 1024;

  CommandStream(const VkDeviceFunctions& fns, VkDevice device, VkQueue queue, uint32_t queue_family,
                const VkPhysicalDeviceLimits& limits, MemoryAllocator* memory);
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  /* The command buffer being recorded, starting a batch if none is. */
  VkCommandBuffer Record();
  /* Serial of the batch being recorded (valid after Record()). */
  uint64_t recording_serial() const { return batches_[recording_].serial; }
  /* Counts one recorded command; submits the batch when it is full. */
  void CommandDone();

  /* A descriptor set of `layout` valid until the current batch retires (no push descriptors). */
  VkDescriptorSet AllocateDescriptorSet(VkDescriptorSetLayout layout);
  /* `size` bytes of uniform-buffer space valid until the current batch retires. */
  UniformSlice AllocateUniform(VkDeviceSize size);

  bool Completed(uint64_t serial) const { return serial <= completed_; }
  /* Blocks until the batch `serial` (and all before it) completed; submits it if needed. */
  void WaitFor(uint64_t serial);
  /* Submits what is recorded and waits for everything. */
  void Sync();
  /* Releases `buf` now if no pending batch uses it, else when its last batch retires. */
  void Free(BufferDescriptor* buf);
  /* Submits the recording batch without waiting. */
  void Flush();

  struct Counters {
    uint64_t commands = 0;     // dispatches and copies recorded
    uint64_t submits = 0;      // vkQueueSubmit calls
    uint64_t fence_waits = 0;  // batches the host waited for
  };
  const Counters& counters() const { return counters_; }

 private:
  enum class State { kIdle, kRecording, kInFlight };
  struct Batch {
    VkCommandPool pool = nullptr;
    VkCommandBuffer cmd = nullptr;
    VkFence fence = nullptr;
    State state = State::kIdle;
    uint64_t serial = 0;
    uint32_t commands = 0;
    std::vector<VkDescriptorPool> descriptor_pools;
    size_t descriptor_pool = 0;  // index of the pool sets come from
    std::vector<HostBuffer> uniforms;
    size_t uniform_chunk = 0;
    VkDeviceSize uniform_used = 0;
    std::vector<BufferDescriptor*> frees;
  };

  void Retire(Batch* batch);
  Batch* Find(uint64_t serial);
  VkDescriptorPool NewDescriptorPool();

  const VkDeviceFunctions& fns_;
  VkDevice device_;
  VkQueue queue_;
  VkDeviceSize uniform_alignment_;
  VkDeviceSize uniform_chunk_size_;
  MemoryAllocator* memory_;
  std::array<Batch, kRingSize> batches_;
  int recording_ = -1;  // index of the recording batch, -1 if none
  int next_slot_ = 0;   // where the next batch records (batches are used round-robin)
  uint64_t next_serial_ = 1;
  uint64_t completed_ = 0;  // every batch with a serial <= this has retired
  Counters counters_;
};

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_STREAM_H_
