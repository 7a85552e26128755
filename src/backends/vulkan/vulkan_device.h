/*
 * One logical Vulkan device: VkDevice, its compute queue, the tensor memory allocator, the
 * batched command stream and a staging buffer, plus the copies between host and device.
 *
 * A single mutex per device serializes the allocator, the stream and the queue (Vulkan requires
 * external synchronization for all three); kernel launches take it once per launch.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_H_

#include <memory>
#include <mutex>
#include <utility>

#include "vk_api.h"
#include "vk_library.h"
#include "vulkan_memory.h"
#include "vulkan_physical_device.h"
#include "vulkan_stream.h"

namespace tvm_runtime {
namespace vulkan {

/* Environment switch: 1 = bind descriptors through descriptor sets even when the device
 * supports VK_KHR_push_descriptor (apache-tvm's name for the same switch). */
constexpr const char* kDisablePushDescriptorEnvVar = "TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR";

class VulkanRuntime;

class VulkanDevice {
 public:
  VulkanDevice(const VulkanRuntime& runtime, const PhysicalDeviceInfo& info, int32_t device_id);
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  int32_t id() const { return id_; }
  const PhysicalDeviceInfo& info() const { return info_; }
  VkDevice handle() const { return device_; }
  const VkDeviceFunctions& fns() const { return fns_; }
  bool push_descriptors() const { return push_descriptors_; }

  /* Guards memory(), stream() and the queue; kernel launches record under it. */
  std::mutex& mutex() { return mu_; }
  MemoryAllocator& memory() { return *memory_; }
  CommandStream& stream() { return *stream_; }
  /* Bound in place of NULL buffer arguments (Vulkan has no null storage-buffer descriptor). */
  BufferDescriptor* null_buffer() const { return null_buffer_; }

  // Thread-safe operations (each takes the mutex).
  BufferDescriptor* Allocate(uint64_t nbytes, uint64_t alignment);
  void Free(BufferDescriptor* buf);
  /* Host -> device; returns once `src` may be reused. */
  void CopyFromHost(const void* src, BufferDescriptor* dst, uint64_t dst_offset, uint64_t nbytes);
  /* Device -> host; returns once the data is in `dst`. */
  void CopyToHost(BufferDescriptor* src, uint64_t src_offset, void* dst, uint64_t nbytes);
  /* Device -> device on this device; recorded into the stream, asynchronous. */
  void CopyOnDevice(BufferDescriptor* src, uint64_t src_offset, BufferDescriptor* dst,
                    uint64_t dst_offset, uint64_t nbytes);
  void Sync();
  /* The allocator's state and the stream's counters, for diagnostics and tests. */
  std::pair<MemoryStats, CommandStream::Counters> Stats();
  /* Called once at process exit: waits for the queue to drain. */
  void WaitIdleAtExit();

 private:
  void CreateLogicalDevice(const VulkanRuntime& runtime);
  HostBuffer& Staging(VkDeviceSize nbytes);
  /* Records a buffer copy plus the barrier after it; returns the serial of its batch. */
  uint64_t RecordCopy(VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
                      VkDeviceSize nbytes);

  const PhysicalDeviceInfo& info_;
  int32_t id_;
  VkDevice device_ = nullptr;
  VkQueue queue_ = nullptr;
  VkDeviceFunctions fns_;
  bool push_descriptors_ = false;
  std::mutex mu_;
  std::unique_ptr<MemoryAllocator> memory_;
  std::unique_ptr<CommandStream> stream_;
  BufferDescriptor* null_buffer_ = nullptr;
  HostBuffer staging_;
};

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_DEVICE_H_
