#include "constant_pool.h"

#include <sys/mman.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/dtype.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <algorithm>
#include <utility>

#include "../tensor_ops.h"
#include "allocators.h"
#include "constant_store.h"

namespace tvm_runtime {
namespace core {
namespace vm {

namespace ffi = ::tvm::ffi;

/* One anonymous mapping holding the host copies of an executable's misaligned constants.
 * Its own mapping rather than the C heap: freeing it gives the memory back to the system at
 * once (glibc keeps large freed blocks once its mmap threshold has grown, so a process that
 * reloads models would creep), and a large one can use transparent huge pages, which cuts
 * the page faults of filling it by 512x. */
class HostArena {
 public:
  explicit HostArena(uint64_t bytes) : size_(std::max<uint64_t>(bytes, 1)) {
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      backend::ThrowError("RuntimeError", "cannot reserve " + std::to_string(size_) +
                                              " bytes of host memory for the model's constants "
                                              "(out of memory)");
    }
#ifdef MADV_HUGEPAGE  // Linux's transparent huge pages; macOS has no such advice
    constexpr uint64_t kHugePage = uint64_t{2} << 20;
    if (size_ >= kHugePage) madvise(p, size_, MADV_HUGEPAGE);
#endif
    base_ = static_cast<char*>(p);
  }
  ~HostArena() { munmap(base_, size_); }
  HostArena(const HostArena&) = delete;
  HostArena& operator=(const HostArena&) = delete;

  char* at(uint64_t offset) const { return base_ + offset; }

 private:
  char* base_ = nullptr;
  uint64_t size_;
};

namespace {

// NDAlloc of a host tensor whose data lies in memory `owner` holds (the payload, the arena or
// the store's mapped image), which the tensor keeps alive.
template <typename Owner>
struct OwnedData {
  std::shared_ptr<Owner> owner;
  const char* data;
  void AllocData(DLTensor* t) { t->data = const_cast<char*>(data); }
  void FreeData(DLTensor*) {}
};
template <typename Owner>
OwnedData<Owner> Owned(std::shared_ptr<Owner> owner, const char* data) {
  return OwnedData<Owner>{std::move(owner), data};
}

std::string Join(const std::vector<int64_t>& dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out;
}

}  // namespace

void ConstantPool::AddValue(ffi::Any value) {
  Entry e;
  e.value = std::move(value);
  entries_.push_back(std::move(e));
}

void ConstantPool::AddTensor(DLDataType dtype, std::vector<int64_t> shape, const char* data,
                             uint64_t nbytes) {
  TensorSource t{dtype, std::move(shape), data, nbytes, 0, ffi::Tensor()};
  if (!Aligned(t)) {
    // A slot even for an empty tensor: compiled code rejects a NULL data pointer.
    t.arena_offset = arena_bytes_;
    uint64_t slot = std::max<uint64_t>(nbytes, 1);
    arena_bytes_ += (slot + TVM_RUNTIME_ALLOC_ALIGNMENT - 1) / TVM_RUNTIME_ALLOC_ALIGNMENT *
                    TVM_RUNTIME_ALLOC_ALIGNMENT;
  }
  Entry e;
  e.tensor = static_cast<int64_t>(tensors_.size());
  entries_.push_back(std::move(e));
  tensors_.push_back(std::move(t));
  ++stats_.tensors;
}

bool ConstantPool::Aligned(const TensorSource& t) const {
  return t.nbytes != 0 && reinterpret_cast<uintptr_t>(t.data) % TVM_RUNTIME_ALLOC_ALIGNMENT == 0;
}

void ConstantPool::Read(const TensorSource& t, void* dst) const {
  if (!payload_->Read(t.data, static_cast<size_t>(t.nbytes), dst)) {
    backend::ThrowError("RuntimeError",
                        "cannot read a constant of " + std::to_string(t.nbytes) +
                            " bytes from the model's library file: it was truncated or replaced "
                            "on disk while loaded; load the model again");
  }
}

std::string ConstantPool::Describe(size_t i) const {
  const Entry& e = entries_[i];
  if (e.tensor < 0) return std::string();
  const TensorSource& t = tensors_[e.tensor];
  return "tensor[" + Join(t.shape) + "] " + std::string(ffi::DLDataTypeToString(t.dtype));
}

ffi::Tensor ConstantPool::Host(size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  TensorSource& t = tensors_[entries_[i].tensor];
  if (t.host.defined()) return t.host;
  const DLDevice cpu{kDLCPU, 0};
  ffi::ShapeView shape(t.shape.data(), t.shape.size());
  if (Aligned(t)) {
    t.host = ffi::Tensor::FromNDAlloc(Owned(payload_, t.data), shape, t.dtype, cpu);
    ++stats_.aliased;
    stats_.aliased_bytes += static_cast<int64_t>(t.nbytes);
    return t.host;
  }
  if (const std::shared_ptr<const StoredImage>& image = Image()) {
    t.host = ffi::Tensor::FromNDAlloc(Owned(image, image->at(t.arena_offset)), shape, t.dtype, cpu);
    ++stats_.stored;
    stats_.stored_bytes += static_cast<int64_t>(t.nbytes);
    return t.host;
  }
  if (arena_ == nullptr) arena_ = std::make_shared<HostArena>(arena_bytes_);
  char* slot = arena_->at(t.arena_offset);
  Read(t, slot);
  payload_->Release(t.data, static_cast<size_t>(t.nbytes));
  t.host = ffi::Tensor::FromNDAlloc(Owned(arena_, slot), shape, t.dtype, cpu);
  ++stats_.copied;
  stats_.copied_bytes += static_cast<int64_t>(t.nbytes);
  return t.host;
}

const std::shared_ptr<const StoredImage>& ConstantPool::Image() {
  if (image_tried_) return image_;
  image_tried_ = true;
  std::vector<RealignedSlot> slots;
  for (const TensorSource& t : tensors_) {
    if (Aligned(t)) continue;
    std::string layout = std::string(ffi::DLDataTypeToString(t.dtype)) + "[" + Join(t.shape) + "]";
    slots.push_back({t.data, t.nbytes, t.arena_offset, std::move(layout)});
  }
  image_ = MapRealignedImage(*payload_, slots, arena_bytes_);
  return image_;
}

ffi::Tensor ConstantPool::OnDevice(size_t i, DLDevice device, Allocator* alloc) {
  if (device.device_type == kDLCPU) return Host(i);
  std::lock_guard<std::mutex> lock(mu_);
  TensorSource& t = tensors_[entries_[i].tensor];
  ffi::Tensor dst = alloc->Empty(ffi::ShapeView(t.shape.data(), t.shape.size()), t.dtype);
  if (t.host.defined()) {
    CopyTensor(t.host.GetDLTensorPtr(), dst.GetDLTensorPtr(), CopyWait::kFinished);
    return dst;
  }
  // The backend reads the payload where it lies: no host copy of the weight is ever made.
  DLTensor from{};
  from.data = const_cast<char*>(t.data);
  from.device = DLDevice{kDLCPU, 0};
  from.ndim = static_cast<int32_t>(t.shape.size());
  from.dtype = t.dtype;
  from.shape = t.shape.data();
  // Waits: the payload's pages are released right after.
  CopyTensor(&from, dst.GetDLTensorPtr(), CopyWait::kFinished);
  payload_->Release(t.data, static_cast<size_t>(t.nbytes));
  ++stats_.uploaded;
  return dst;
}

ConstantPoolStats ConstantPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
