/*
 * Memory for the Relax VM: per-device allocators (naive and pooled, numbered as apache-tvm's
 * AllocatorType) and the `vm.Storage` object that `vm.builtin.alloc_storage` returns.
 *
 * Every byte comes from the device's backend table (TVMRuntimeDeviceAPI::alloc_data/free_data),
 * so the VM allocates on any device a backend wheel registers, exactly as the CPU does.
 * Allocators are process-wide, one per (device, type), created on first use and never destroyed:
 * a pooled allocator keeps freed blocks, and releasing device memory from a static destructor
 * would call into drivers that may already be unloaded.
 */
#ifndef TVM_RUNTIME_CORE_VM_ALLOCATORS_H_
#define TVM_RUNTIME_CORE_VM_ALLOCATORS_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/object.h>
#include <tvm_runtime/c_api.h>

#include <cstdint>
#include <string>
#include <utility>

#include "../tensor_ops.h"

namespace tvm_runtime {
namespace core {
namespace vm {

enum class AllocatorType : int { kNaive = 1, kPooled = 2 };

struct Buffer {
  void* data = nullptr;
  uint64_t size = 0;  // bytes reserved (the pooled allocator rounds up)
  DLDevice device{kDLCPU, 0};
};

class Allocator {
 public:
  Allocator(DLDevice device, AllocatorType type, const TVMRuntimeDeviceAPI* api)
      : device_(device), type_(type), api_(api) {}
  virtual ~Allocator() = default;
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  /* At least `nbytes` bytes aligned to `alignment` (>= 64) on this allocator's device. */
  virtual Buffer Alloc(uint64_t nbytes, uint64_t alignment, DLDataType type_hint) = 0;
  /* Never throws (called from destructors). */
  virtual void Free(const Buffer& buffer) noexcept = 0;
  /* Give cached blocks back to the device; returns how many bytes they held. */
  virtual uint64_t Clear() noexcept { return 0; }

  /* A fresh compact tensor that owns a buffer of this allocator. */
  ::tvm::ffi::Tensor Empty(::tvm::ffi::ShapeView shape, DLDataType dtype);

  DLDevice device() const { return device_; }
  AllocatorType type() const { return type_; }
  /* Whether the device's handles are addresses (HasPointerArithmetic of its table). */
  bool pointer_arithmetic() const;

 protected:
  void* DeviceAlloc(uint64_t nbytes, uint64_t alignment, DLDataType type_hint);
  void DeviceFree(void* data) noexcept;

  DLDevice device_;
  AllocatorType type_;
  const TVMRuntimeDeviceAPI* api_;
};

/* The process-wide allocator of `type` for `device`; throws (with the wheel to install) when no
 * backend serves the device, ValueError for an unknown allocator type. */
Allocator* GetAllocator(DLDevice device, int type);

/* Release the blocks every pooled allocator is holding (`vm.builtin.memory_manager.clear`);
 * returns how many bytes they held. */
uint64_t ClearAllocators();

/* Alignment of a buffer of `dtype` elements, as apache-tvm's memory manager computes it. */
uint64_t StorageAlignment(DLDataType dtype);

/* A block of device memory that tensors are carved from; returned to its allocator when the
 * last tensor (and the VM register) referring to it is gone. */
class StorageObj : public ::tvm::ffi::Object {
 public:
  Buffer buffer;
  Allocator* allocator = nullptr;

  ~StorageObj() {
    if (allocator != nullptr) allocator->Free(buffer);
  }

  /* A tensor view of `shape`/`dtype` at byte `offset` of this storage. */
  ::tvm::ffi::Tensor AllocTensor(int64_t offset, ::tvm::ffi::ShapeView shape, DLDataType dtype);

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("vm.Storage", StorageObj, ::tvm::ffi::Object);
};

class Storage : public ::tvm::ffi::ObjectRef {
 public:
  explicit Storage(::tvm::ffi::ObjectPtr<StorageObj> n) : ObjectRef(std::move(n)) {}
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Storage, ::tvm::ffi::ObjectRef, StorageObj);
};

/* `src` itself if it already lives on `device`, else a copy there made with `alloc`. */
::tvm::ffi::Tensor TensorOnDevice(const ::tvm::ffi::Tensor& src, DLDevice device, Allocator* alloc);

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_ALLOCATORS_H_
