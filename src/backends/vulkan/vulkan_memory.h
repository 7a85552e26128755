/*
 * Device memory for tensors: a sub-allocator over large VkDeviceMemory blocks.
 *
 * Each block is one VkDeviceMemory with one VkBuffer spanning all of it; a tensor is a range of
 * that buffer (kernels bind it with a descriptor offset), so allocating a tensor costs no Vulkan
 * call at all once a block exists.  Ranges are handed out best-fit from per-block free lists and
 * coalesced on release; requests larger than half a block get a dedicated block of their own.
 * One empty block is kept cached so an alloc/free loop does not thrash the driver.
 *
 * On devices whose tensor memory is host-visible and coherent (lavapipe, most integrated GPUs)
 * blocks stay persistently mapped and host copies are a memcpy; elsewhere copies go through a
 * host-visible staging buffer (see VulkanDevice).
 *
 * Not thread-safe: the owning VulkanDevice serializes every call with its mutex.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_MEMORY_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_MEMORY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vk_api.h"
#include "vk_library.h"
#include "vulkan_physical_device.h"

namespace tvm_runtime {
namespace vulkan {

/* Environment switch: 1 = never map tensor memory, copy through staging (tests that path). */
constexpr const char* kForceStagingEnvVar = "TVM_VULKAN_FORCE_STAGING";

struct MemoryBlock;

/*
 * What `DLTensor::data` points to for Vulkan tensors.  TVM host code passes it through to
 * kernels untouched; the launcher turns it into a descriptor (buffer, offset, size).  64-byte
 * aligned because compiled host code assumes TVM_RUNTIME_ALLOC_ALIGNMENT for every data pointer.
 */
struct alignas(64) BufferDescriptor {
  static constexpr uint64_t kMagic = 0x7476'6d5f'766b'6266ULL;  // "tvm_vkbf"
  uint64_t magic = kMagic;    // lets a launch reject pointers that are no Vulkan buffer
  VkBuffer buffer = nullptr;  // the block's buffer
  VkDeviceSize offset = 0;    // where this tensor starts inside it
  VkDeviceSize size = 0;      // bytes requested
  VkDeviceSize reserved = 0;  // bytes reserved in the block (size rounded up)
  char* host = nullptr;       // mapped address of `offset`, when tensors are host-mapped
  MemoryBlock* block = nullptr;
  int32_t device_id = 0;
  uint64_t last_use = 0;  // serial of the last command batch that referenced it
};

/* A standalone host-visible, coherent, persistently mapped buffer (staging, uniforms). */
struct HostBuffer {
  VkBuffer buffer = nullptr;
  VkDeviceMemory memory = nullptr;
  VkDeviceSize size = 0;
  char* mapped = nullptr;
};

struct MemoryStats {
  uint64_t blocks = 0;              // VkDeviceMemory blocks held for tensors
  uint64_t block_bytes = 0;         // their total size
  uint64_t live_allocations = 0;    // tensors currently allocated
  uint64_t live_bytes = 0;          // bytes reserved by them
  uint64_t device_allocations = 0;  // vkAllocateMemory calls for tensor blocks so far
};

class MemoryAllocator {
 public:
  MemoryAllocator(const VkDeviceFunctions& fns, VkDevice device, const PhysicalDeviceInfo& info,
                  int32_t device_id);
  ~MemoryAllocator();
  MemoryAllocator(const MemoryAllocator&) = delete;
  MemoryAllocator& operator=(const MemoryAllocator&) = delete;

  /* A range of at least `nbytes` (>= 1) aligned to `alignment`; throws RuntimeError when the
   * device is out of memory. */
  BufferDescriptor* Allocate(uint64_t nbytes, uint64_t alignment);
  /* Returns the range immediately: the caller made sure no pending command still uses it. */
  void Release(BufferDescriptor* buf);

  /* True when tensors are host-visible and coherent, so `BufferDescriptor::host` is set. */
  bool host_mapped() const { return host_mapped_; }
  MemoryStats stats() const;

  HostBuffer CreateHostBuffer(VkDeviceSize size, VkFlags usage);
  void DestroyHostBuffer(HostBuffer* buf);

 private:
  MemoryBlock* CreateBlock(VkDeviceSize size, bool dedicated);
  void DestroyBlock(MemoryBlock* block);
  bool AllocateFrom(MemoryBlock* block, VkDeviceSize size, VkDeviceSize alignment,
                    VkDeviceSize* offset);
  uint32_t ChooseType(VkFlags usage, bool for_tensors, VkFlags* properties) const;
  std::string DescribeUsage() const;

  const VkDeviceFunctions& fns_;
  VkDevice device_;
  const PhysicalDeviceInfo& info_;
  int32_t device_id_;
  uint32_t tensor_type_ = 0;  // memory type index of tensor blocks
  uint32_t host_type_ = 0;    // memory type index of host buffers
  bool host_mapped_ = false;
  VkDeviceSize granule_ = 256;  // offset and size granularity of tensor ranges
  VkDeviceSize block_size_ = 0;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;
  uint64_t device_allocations_ = 0;
};

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_MEMORY_H_
