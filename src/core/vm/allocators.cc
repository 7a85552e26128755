#include "allocators.h"

#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../device_registry.h"

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

namespace ffi = ::tvm::ffi;

class NaiveAllocator final : public Allocator {
 public:
  using Allocator::Allocator;

  Buffer Alloc(uint64_t nbytes, uint64_t alignment, DLDataType type_hint) final {
    Buffer b;
    b.data = DeviceAlloc(nbytes, alignment, type_hint);
    b.size = nbytes;
    b.device = device_;
    return b;
  }

  void Free(const Buffer& buffer) noexcept final { DeviceFree(buffer.data); }
};

// Rounds every request up to whole pages and keeps freed blocks in per-size free lists.
class PooledAllocator final : public Allocator {
 public:
  static constexpr uint64_t kPageSize = 4096;
  using Allocator::Allocator;

  Buffer Alloc(uint64_t nbytes, uint64_t alignment, DLDataType type_hint) final {
    uint64_t size = (std::max<uint64_t>(nbytes, 1) + kPageSize - 1) / kPageSize * kPageSize;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = pool_.find(size);
      if (it != pool_.end() && !it->second.empty()) {
        Buffer b = it->second.back();
        it->second.pop_back();
        return b;
      }
    }
    Buffer b;
    b.size = size;
    b.device = device_;
    try {
      b.data = DeviceAlloc(size, alignment, type_hint);
    } catch (const ffi::Error&) {
      // Out of memory with blocks parked in the pool: give them back and try once more.
      Clear();
      b.data = DeviceAlloc(size, alignment, type_hint);
    }
    return b;
  }

  void Free(const Buffer& buffer) noexcept final {
    try {
      std::lock_guard<std::mutex> lock(mu_);
      pool_[buffer.size].push_back(buffer);
    } catch (...) {
      DeviceFree(buffer.data);  // could not park it (out of memory): release it instead
    }
  }

  uint64_t Clear() noexcept final {
    std::unordered_map<uint64_t, std::vector<Buffer>> blocks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocks.swap(pool_);
    }
    uint64_t bytes = 0;
    for (auto& kv : blocks) {
      for (const Buffer& b : kv.second) {
        DeviceFree(b.data);
        bytes += b.size;
      }
    }
    return bytes;
  }

 private:
  std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<Buffer>> pool_;
};

struct AllocatorRegistry {
  std::mutex mu;
  // key: (device_type, device_id, allocator type)
  std::map<std::tuple<int, int, int>, std::unique_ptr<Allocator>> allocators;
};

AllocatorRegistry& Registry() {
  static AllocatorRegistry* registry = new AllocatorRegistry();  // leaked: see allocators.h
  return *registry;
}

// NDAlloc of Allocator::Empty: the tensor owns one buffer of the allocator.
struct OwnedBufferAlloc {
  Allocator* allocator;
  Buffer buffer;
  void AllocData(DLTensor* t) { t->data = buffer.data; }
  void FreeData(DLTensor*) { allocator->Free(buffer); }
};

// NDAlloc of StorageObj::AllocTensor: the tensor keeps its storage alive.
struct StorageViewAlloc {
  ffi::ObjectPtr<StorageObj> storage;
  void AllocData(DLTensor* t, int64_t offset) {
    char* base = static_cast<char*>(storage->buffer.data);
    // Compiled kernels require byte_offset == 0 and assume 64-byte aligned data: where the
    // handle is an address, fold an aligned offset into the pointer.
    if (offset % TVM_RUNTIME_ALLOC_ALIGNMENT == 0 && storage->allocator != nullptr &&
        storage->allocator->pointer_arithmetic()) {
      t->data = base + offset;
      t->byte_offset = 0;
    } else {
      t->data = base;
      t->byte_offset = static_cast<uint64_t>(offset);
    }
  }
  void FreeData(DLTensor*) {}
};

}  // namespace

uint64_t StorageAlignment(DLDataType dtype) {
  uint64_t elem = static_cast<uint64_t>(dtype.bits) * dtype.lanes / 8;
  return std::max<uint64_t>(elem, TVM_RUNTIME_ALLOC_ALIGNMENT);
}

bool Allocator::pointer_arithmetic() const { return HasPointerArithmetic(*api_); }

void* Allocator::DeviceAlloc(uint64_t nbytes, uint64_t alignment, DLDataType type_hint) {
  void* data = nullptr;
  if (api_->alloc_data(api_->self, device_.device_id, nbytes, alignment, type_hint, &data) != 0) {
    backend::ThrowRaised();
  }
  if (data == nullptr && nbytes != 0) {
    backend::ThrowError("RuntimeError", "allocation of " + std::to_string(nbytes) + " bytes on " +
                                            DescribeDevice(device_) + " returned no memory");
  }
  return data;
}

void Allocator::DeviceFree(void* data) noexcept {
  if (data == nullptr) return;
  // A destructor cannot throw; drop the error (the driver is most likely shutting down).
  if (api_->free_data(api_->self, device_.device_id, data) != 0) DropRaisedError();
}

ffi::Tensor Allocator::Empty(ffi::ShapeView shape, DLDataType dtype) {
  uint64_t nbytes = CheckedByteSize(shape.data(), static_cast<int>(shape.size()), dtype);
  Buffer b = Alloc(nbytes, StorageAlignment(dtype), dtype);
  try {
    return ffi::Tensor::FromNDAlloc(OwnedBufferAlloc{this, b}, shape, dtype, device_);
  } catch (...) {
    Free(b);
    throw;
  }
}

Allocator* GetAllocator(DLDevice device, int type) {
  if (type != static_cast<int>(AllocatorType::kNaive) &&
      type != static_cast<int>(AllocatorType::kPooled)) {
    backend::ThrowError("ValueError", "unknown VM allocator type " + std::to_string(type) +
                                          " (1 = naive, 2 = pooled)");
  }
  const TVMRuntimeDeviceAPI& api = RequireDevice(device.device_type);
  AllocatorRegistry& reg = Registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  auto key = std::make_tuple(static_cast<int>(device.device_type), device.device_id, type);
  auto it = reg.allocators.find(key);
  if (it != reg.allocators.end()) return it->second.get();
  std::unique_ptr<Allocator> alloc;
  if (type == static_cast<int>(AllocatorType::kNaive)) {
    alloc = std::make_unique<NaiveAllocator>(device, AllocatorType::kNaive, &api);
  } else {
    alloc = std::make_unique<PooledAllocator>(device, AllocatorType::kPooled, &api);
  }
  Allocator* out = alloc.get();
  reg.allocators.emplace(key, std::move(alloc));
  return out;
}

uint64_t ClearAllocators() {
  AllocatorRegistry& reg = Registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  uint64_t bytes = 0;
  for (auto& kv : reg.allocators) bytes += kv.second->Clear();
  return bytes;
}

ffi::Tensor StorageObj::AllocTensor(int64_t offset, ffi::ShapeView shape, DLDataType dtype) {
  if (dtype.lanes < 1 || (dtype.bits % 8 != 0 && !(dtype.bits == 1 && dtype.code == kDLUInt) &&
                          dtype.code != kDLBool)) {
    backend::ThrowError("ValueError", "alloc_tensor: unsupported dtype " +
                                          std::string(ffi::DLDataTypeToString(dtype)));
  }
  // A wrapped size would pass the bounds check below (the fuzzer found such a shape in a
  // corrupted executable).
  uint64_t needed = 0;
  switch (CompactByteSize(shape.data(), static_cast<int>(shape.size()), dtype, &needed)) {
    case TensorSize::kOk:
      break;
    case TensorSize::kNegativeDimension:
      backend::ThrowError("ValueError", "alloc_tensor: negative dimension in shape");
    case TensorSize::kTooLarge:
      backend::ThrowError("ValueError", "alloc_tensor: the shape's size does not fit in 64 bits");
  }
  if (offset < 0 || static_cast<uint64_t>(offset) > buffer.size ||
      needed > buffer.size - static_cast<uint64_t>(offset)) {
    backend::ThrowError("ValueError", "alloc_tensor: a tensor of " + std::to_string(needed) +
                                          " bytes at offset " + std::to_string(offset) +
                                          " does not fit in a storage of " +
                                          std::to_string(buffer.size) + " bytes");
  }
  return ffi::Tensor::FromNDAlloc(StorageViewAlloc{ffi::GetObjectPtr<StorageObj>(this)}, shape,
                                  dtype, buffer.device, offset);
}

ffi::Tensor TensorOnDevice(const ffi::Tensor& src, DLDevice device, Allocator* alloc) {
  const DLTensor* s = src.GetDLTensorPtr();
  if (s->device.device_type == device.device_type && s->device.device_id == device.device_id) {
    return src;
  }
  ffi::Tensor dst = alloc->Empty(src.shape(), s->dtype);
  CopyTensor(s, dst.GetDLTensorPtr(), CopyWait::kFinished);
  return dst;
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
