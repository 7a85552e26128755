#include "vulkan_memory.h"

#include <tvm_runtime/backend/error.h>

#include <algorithm>

#include "vk_error.h"
#include "vulkan_runtime.h"

namespace tvm_runtime {
namespace vulkan {

struct MemoryBlock {
  VkDeviceMemory memory = nullptr;
  VkBuffer buffer = nullptr;
  VkDeviceSize size = 0;
  char* mapped = nullptr;
  bool dedicated = false;
  std::map<VkDeviceSize, VkDeviceSize> free_ranges;  // offset -> length, never adjacent
  uint64_t live = 0;
  uint64_t live_bytes = 0;
};

namespace {

constexpr VkDeviceSize kDefaultBlockSize = 64ULL << 20;
constexpr VkDeviceSize kMinBlockSize = 1ULL << 20;
constexpr VkFlags kTensorUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
constexpr VkFlags kHostCoherent =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

VkBufferCreateInfo BufferInfo(VkDeviceSize size, VkFlags usage) {
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = size;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  return info;
}

}  // namespace

MemoryAllocator::MemoryAllocator(const VkDeviceFunctions& fns, VkDevice device,
                                 const PhysicalDeviceInfo& info, int32_t device_id)
    : fns_(fns), device_(device), info_(info), device_id_(device_id) {
  VkFlags tensor_props = 0, host_props = 0;
  tensor_type_ = ChooseType(kTensorUsage, /*for_tensors=*/true, &tensor_props);
  host_type_ = ChooseType(kTensorUsage | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, false, &host_props);
  host_mapped_ = (tensor_props & kHostCoherent) == kHostCoherent && !EnvFlag(kForceStagingEnvVar);
  const VkPhysicalDeviceLimits& limits = info.props.limits;
  granule_ = std::max<VkDeviceSize>(256, limits.minStorageBufferOffsetAlignment);
  VkDeviceSize heap = info.memory.memoryHeaps[info.memory.memoryTypes[tensor_type_].heapIndex].size;
  block_size_ = std::max(kMinBlockSize, std::min(kDefaultBlockSize, heap / 4));
  block_size_ = RoundUp(block_size_, granule_);
}

// Devices are never destroyed (see VulkanRuntime), so neither are their allocators; defined here
// because MemoryBlock is only complete in this file.
MemoryAllocator::~MemoryAllocator() = default;

uint32_t MemoryAllocator::ChooseType(VkFlags usage, bool for_tensors, VkFlags* properties) const {
  VkBufferCreateInfo probe_info = BufferInfo(4096, usage);
  VkBuffer probe = nullptr;
  CheckVk(fns_.CreateBuffer(device_, &probe_info, nullptr, &probe), "vkCreateBuffer");
  VkMemoryRequirements req{};
  fns_.GetBufferMemoryRequirements(device_, probe, &req);
  fns_.DestroyBuffer(device_, probe, nullptr);

  const bool unified = info_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                       info_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  int best_score = -1;
  uint32_t best = 0;
  for (uint32_t i = 0; i < info_.memory.memoryTypeCount && i < kVkMaxMemoryTypes; ++i) {
    if (!(req.memoryTypeBits & (1U << i))) continue;
    VkFlags flags = info_.memory.memoryTypes[i].propertyFlags;
    if (flags & (VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT | VK_MEMORY_PROPERTY_PROTECTED_BIT))
      continue;
    const bool coherent = (flags & kHostCoherent) == kHostCoherent;
    int score = 0;
    if (for_tensors) {
      if (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) score += 100;
      // Unified memory: mapping makes host copies free.  Discrete: keep tensors in VRAM proper
      // and leave the small host-visible VRAM window (ReBAR) alone.
      if (unified && coherent) score += 50;
      if (!unified && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) score -= 10;
      if (score < 0) score = 0;
    } else {
      if (!coherent) continue;
      score = 10 + ((flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 10 : 0);  // cached: fast reads
    }
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  if (best_score < 0) {
    backend::ThrowError("RuntimeError", std::string("Vulkan device '") + info_.props.deviceName +
                                            "' has no memory type usable for " +
                                            (for_tensors ? "tensors" : "host-visible buffers"));
  }
  *properties = info_.memory.memoryTypes[best].propertyFlags;
  return best;
}

MemoryBlock* MemoryAllocator::CreateBlock(VkDeviceSize size, bool dedicated) {
  auto block = std::make_unique<MemoryBlock>();
  block->size = size;
  block->dedicated = dedicated;
  // What failed, with the size and the device's usage, so an out-of-memory error says why.
  auto context = [&](const char* call, VkDeviceSize bytes) {
    return std::string(call) + " of " + std::to_string(bytes) + " bytes on Vulkan device " +
           std::to_string(device_id_) + " ('" + info_.props.deviceName + "'; " + DescribeUsage() +
           ")";
  };
  VkBufferCreateInfo info = BufferInfo(size, kTensorUsage);
  VkResult created = fns_.CreateBuffer(device_, &info, nullptr, &block->buffer);
  if (created != VK_SUCCESS) ThrowVkError(created, context("vkCreateBuffer", size));
  VkMemoryRequirements req{};
  fns_.GetBufferMemoryRequirements(device_, block->buffer, &req);
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = tensor_type_;
  VkResult r = fns_.AllocateMemory(device_, &alloc, nullptr, &block->memory);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    // Give cached empty blocks back to the driver and try once more.
    for (size_t i = 0; i < blocks_.size();) {
      if (blocks_[i]->live == 0) {
        DestroyBlock(blocks_[i].get());
      } else {
        ++i;
      }
    }
    r = fns_.AllocateMemory(device_, &alloc, nullptr, &block->memory);
  }
  if (r != VK_SUCCESS) {
    fns_.DestroyBuffer(device_, block->buffer, nullptr);
    ThrowVkError(r, context("vkAllocateMemory", req.size));
  }
  ++device_allocations_;
  r = fns_.BindBufferMemory(device_, block->buffer, block->memory, 0);
  if (r == VK_SUCCESS && host_mapped_) {
    void* ptr = nullptr;
    r = fns_.MapMemory(device_, block->memory, 0, kVkWholeSize, 0, &ptr);
    block->mapped = static_cast<char*>(ptr);
  }
  if (r != VK_SUCCESS) {
    fns_.DestroyBuffer(device_, block->buffer, nullptr);
    fns_.FreeMemory(device_, block->memory, nullptr);
    ThrowVkError(r, "binding or mapping a Vulkan memory block");
  }
  block->free_ranges.emplace(0, size);
  blocks_.push_back(std::move(block));
  return blocks_.back().get();
}

void MemoryAllocator::DestroyBlock(MemoryBlock* block) {
  fns_.DestroyBuffer(device_, block->buffer, nullptr);
  fns_.FreeMemory(device_, block->memory, nullptr);  // implicitly unmaps
  blocks_.erase(
      std::find_if(blocks_.begin(), blocks_.end(),
                   [block](const std::unique_ptr<MemoryBlock>& b) { return b.get() == block; }));
}

bool MemoryAllocator::AllocateFrom(MemoryBlock* block, VkDeviceSize size, VkDeviceSize alignment,
                                   VkDeviceSize* offset) {
  auto best = block->free_ranges.end();
  VkDeviceSize best_start = 0;
  for (auto it = block->free_ranges.begin(); it != block->free_ranges.end(); ++it) {
    VkDeviceSize start = RoundUp(it->first, alignment);
    if (start + size > it->first + it->second) continue;
    if (best == block->free_ranges.end() || it->second < best->second) {
      best = it;
      best_start = start;
      if (it->second == size) break;  // exact fit
    }
  }
  if (best == block->free_ranges.end()) return false;
  const VkDeviceSize range_start = best->first, range_end = best->first + best->second;
  block->free_ranges.erase(best);
  if (best_start > range_start) block->free_ranges.emplace(range_start, best_start - range_start);
  if (best_start + size < range_end) {
    block->free_ranges.emplace(best_start + size, range_end - best_start - size);
  }
  *offset = best_start;
  return true;
}

BufferDescriptor* MemoryAllocator::Allocate(uint64_t nbytes, uint64_t alignment) {
  const VkDeviceSize size = RoundUp(std::max<uint64_t>(nbytes, 1), granule_);
  // Offsets are multiples of the granule, which satisfies every power-of-two alignment up to it.
  const VkDeviceSize align = alignment > granule_ ? RoundUp(alignment, granule_) : granule_;
  MemoryBlock* block = nullptr;
  VkDeviceSize offset = 0;
  if (size > block_size_ / 2) {
    block = CreateBlock(size, /*dedicated=*/true);
    block->free_ranges.clear();
  } else {
    for (const auto& candidate : blocks_) {
      if (!candidate->dedicated && AllocateFrom(candidate.get(), size, align, &offset)) {
        block = candidate.get();
        break;
      }
    }
    if (block == nullptr) {
      block = CreateBlock(block_size_, /*dedicated=*/false);
      if (!AllocateFrom(block, size, align, &offset)) {
        backend::ThrowError("RuntimeError", "Vulkan allocator: a fresh block cannot hold " +
                                                std::to_string(size) + " bytes");
      }
    }
  }
  auto* buf = new BufferDescriptor();
  buf->buffer = block->buffer;
  buf->offset = offset;
  buf->size = nbytes;
  buf->reserved = size;
  buf->host = block->mapped != nullptr ? block->mapped + offset : nullptr;
  buf->block = block;
  buf->device_id = device_id_;
  ++block->live;
  block->live_bytes += size;
  return buf;
}

void MemoryAllocator::Release(BufferDescriptor* buf) {
  MemoryBlock* block = buf->block;
  VkDeviceSize start = buf->offset, length = buf->reserved;
  buf->magic = 0;  // a stale handle passed to a launch is then rejected, not used
  delete buf;
  --block->live;
  block->live_bytes -= length;
  if (block->dedicated) {
    DestroyBlock(block);
    return;
  }
  // Merge with the free neighbours so the free list never holds adjacent ranges.
  auto next = block->free_ranges.lower_bound(start);
  if (next != block->free_ranges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      length += prev->second;
      block->free_ranges.erase(prev);
    }
  }
  if (next != block->free_ranges.end() && start + length == next->first) {
    length += next->second;
    block->free_ranges.erase(next);
  }
  block->free_ranges.emplace(start, length);
  if (block->live == 0) {
    // Keep one empty block for the next allocation; give further ones back to the driver.
    for (const auto& other : blocks_) {
      if (other.get() != block && !other->dedicated && other->live == 0) {
        DestroyBlock(block);
        return;
      }
    }
  }
}

MemoryStats MemoryAllocator::stats() const {
  MemoryStats s;
  for (const auto& b : blocks_) {
    ++s.blocks;
    s.block_bytes += b->size;
    s.live_allocations += b->live;
    s.live_bytes += b->live_bytes;
  }
  s.device_allocations = device_allocations_;
  return s;
}

std::string MemoryAllocator::DescribeUsage() const {
  MemoryStats s = stats();
  return std::to_string(s.live_allocations) + " tensors of " + std::to_string(s.live_bytes) +
         " bytes live in " + std::to_string(s.blocks) + " blocks of " +
         std::to_string(s.block_bytes) + " bytes";
}

HostBuffer MemoryAllocator::CreateHostBuffer(VkDeviceSize size, VkFlags usage) {
  HostBuffer out;
  out.size = size;
  VkBufferCreateInfo info = BufferInfo(size, usage);
  CheckVk(fns_.CreateBuffer(device_, &info, nullptr, &out.buffer), "vkCreateBuffer");
  VkMemoryRequirements req{};
  fns_.GetBufferMemoryRequirements(device_, out.buffer, &req);
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = host_type_;
  VkResult r = fns_.AllocateMemory(device_, &alloc, nullptr, &out.memory);
  if (r == VK_SUCCESS) r = fns_.BindBufferMemory(device_, out.buffer, out.memory, 0);
  void* ptr = nullptr;
  if (r == VK_SUCCESS) r = fns_.MapMemory(device_, out.memory, 0, kVkWholeSize, 0, &ptr);
  if (r != VK_SUCCESS) {
    DestroyHostBuffer(&out);
    ThrowVkError(r, "allocating a " + std::to_string(size) + "-byte host-visible Vulkan buffer");
  }
  out.mapped = static_cast<char*>(ptr);
  return out;
}

void MemoryAllocator::DestroyHostBuffer(HostBuffer* buf) {
  if (buf->buffer != nullptr) fns_.DestroyBuffer(device_, buf->buffer, nullptr);
  if (buf->memory != nullptr) fns_.FreeMemory(device_, buf->memory, nullptr);
  *buf = HostBuffer();
}

}  // namespace vulkan
}  // namespace tvm_runtime
