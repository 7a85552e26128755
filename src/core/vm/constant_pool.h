/*
 * The constant pool of a Relax VM executable, with tensors (the model's weights) left in the
 * serialized payload until a VM needs them on a device.
 *
 * Parsing reads only each tensor record's header.  A tensor is materialized on first use:
 *  - on the CPU: a tensor that points into the payload when its data is 64-byte aligned (the
 *    alignment compiled kernels assume); else, at the first such constant, the realigned image of
 *    all the misaligned ones is mapped from the weight store (constant_store.h: one copy shared
 *    by every process that loads the model), or, when the store is off or cannot be used, each
 *    is copied straight from the payload into a host arena shared by all the copies of this
 *    executable; cached, so every VM of the executable shares it;
 *  - on another device: one upload straight from the payload (no host staging copy), after
 *    which the payload's pages are released (a mapped file drops them from the resident set).
 * apache-tvm 0.27's executable instead holds a host copy of every weight next to the payload.
 */
#ifndef TVM_RUNTIME_CORE_VM_CONSTANT_POOL_H_
#define TVM_RUNTIME_CORE_VM_CONSTANT_POOL_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "payload.h"

namespace tvm_runtime {
namespace core {
namespace vm {

class Allocator;
class HostArena;
class StoredImage;

/* Counters for tests and diagnostics (`VMExecutable.constant_stats`). */
struct ConstantPoolStats {
  int64_t tensors = 0;        // tensor constants in the pool
  int64_t aliased = 0;        // host tensors pointing into the payload
  int64_t copied = 0;         // host tensors copied out of it (misaligned)
  int64_t stored = 0;         // host tensors in the weight store's mapped image (misaligned)
  int64_t uploaded = 0;       // device uploads made straight from the payload
  int64_t copied_bytes = 0;   // bytes of the copies
  int64_t aliased_bytes = 0;  // bytes of the aliases
  int64_t stored_bytes = 0;   // bytes of the stored ones
};

class ConstantPool {
 public:
  explicit ConstantPool(std::shared_ptr<const Payload> payload) : payload_(std::move(payload)) {}

  /* Appends a non-tensor constant (shape, string, number, dtype). */
  void AddValue(::tvm::ffi::Any value);
  /* Appends a tensor whose `nbytes` bytes of data start at `data`, inside the payload. */
  void AddTensor(DLDataType dtype, std::vector<int64_t> shape, const char* data, uint64_t nbytes);

  size_t size() const { return entries_.size(); }
  bool IsTensor(size_t i) const { return entries_[i].tensor >= 0; }
  /* A non-tensor constant. */
  const ::tvm::ffi::Any& Value(size_t i) const { return entries_[i].value; }
  /* "tensor[2, 3] float32", "shape(1, 2)", ... without materializing anything. */
  std::string Describe(size_t i) const;

  /* The constant as a CPU tensor (created on first use, then shared). */
  ::tvm::ffi::Tensor Host(size_t i);
  /* The constant on `device`: the host tensor on the CPU, else a fresh tensor of `alloc` filled
   * straight from the payload (or from the host tensor when one exists already). */
  ::tvm::ffi::Tensor OnDevice(size_t i, DLDevice device, Allocator* alloc);

  ConstantPoolStats stats() const;

 private:
  struct TensorSource {
    DLDataType dtype;
    std::vector<int64_t> shape;
    const char* data;
    uint64_t nbytes;
    uint64_t arena_offset;  // its slot in the host arena, if it has to be copied
    ::tvm::ffi::Tensor host;
  };
  struct Entry {
    ::tvm::ffi::Any value;
    int64_t tensor = -1;  // index into tensors_, or -1 for a value
  };

  bool Aligned(const TensorSource& t) const;
  /* The weight store's image of every misaligned constant, tried once; nullptr without one. */
  const std::shared_ptr<const StoredImage>& Image();
  void Read(const TensorSource& t, void* dst) const;

  std::shared_ptr<const Payload> payload_;
  std::vector<Entry> entries_;
  std::vector<TensorSource> tensors_;
  uint64_t arena_bytes_ = 0;
  std::shared_ptr<HostArena> arena_;
  std::shared_ptr<const StoredImage> image_;
  bool image_tried_ = false;
  mutable std::mutex mu_;
  ConstantPoolStats stats_;
};

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_CONSTANT_POOL_H_
