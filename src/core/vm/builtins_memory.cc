/*
 * VM builtins for memory (apache-tvm 0.27 names and signatures):
 *   vm.builtin.alloc_storage(vm, Shape size, i64 device_index, DLDataType hint, String scope)
 *       -> Storage of prod(size) elements of `hint` on vm device `device_index` (-1: the host)
 *   vm.builtin.alloc_tensor(Storage, i64 offset, Shape, DLDataType[, String scope]) -> Tensor
 *   vm.builtin.null_value() -> None               (frees a register)
 *   vm.builtin.copy(x) -> x
 *   vm.builtin.reshape(tensor, Shape) -> view of the same data
 *   vm.builtin.to_device(tensor, dev_type, dev_id[, scope]) -> copy on that device
 *   vm.builtin.ensure_zero_offset(tensor) -> tensor with byte_offset 0
 *   vm.builtin.memory_manager.clear()             (releases blocks held by pooled allocators)
 */
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <string>

#include "../ffi_names.h"
#include "allocators.h"
#include "vm.h"
#include "vm_init.h"

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

void RequireGlobalScope(const AnyView& scope, const char* who) {
  if (scope == nullptr) return;
  auto s = scope.try_cast<ffi::String>();
  if (!s.has_value()) {
    backend::ThrowError("TypeError", std::string(who) + ": memory scope must be a string, got " +
                                         scope.GetTypeKey());
  }
  if (!s->empty() && *s != "global") {
    backend::ThrowError("ValueError", std::string(who) + ": memory scope '" + std::string(*s) +
                                          "' is not supported by tvm-runtime (only 'global')");
  }
}

// alloc_storage(vm, size, device_index, dtype_hint, scope)
void AllocStorage(PackedArgs args, Any* rv) {
  if (args.size() != 5) {
    backend::ThrowError("TypeError", "vm.builtin.alloc_storage expects 5 arguments, got " +
                                         std::to_string(args.size()));
  }
  VirtualMachine* vm = VirtualMachine::FromContext(args[0]);
  auto size = args[1].try_cast<ffi::Shape>();
  if (!size.has_value()) {
    backend::ThrowError(
        "TypeError", "vm.builtin.alloc_storage: size must be a Shape, got " + args[1].GetTypeKey());
  }
  int64_t index = args[2].cast<int64_t>();
  DLDataType hint = args[3].cast<DLDataType>();
  RequireGlobalScope(args[4], "vm.builtin.alloc_storage");
  if (vm->num_devices() == 0) {
    backend::ThrowError("RuntimeError", "the Relax VM has no devices: call vm_initialization");
  }
  if (index == -1) index = static_cast<int64_t>(vm->host_index());
  if (index < 0 || index >= static_cast<int64_t>(vm->num_devices())) {
    backend::ThrowError("ValueError", "vm.builtin.alloc_storage: device index " +
                                          std::to_string(index) + " out of range (the VM has " +
                                          std::to_string(vm->num_devices()) + " devices)");
  }
  uint64_t nbytes = 0;
  switch (CompactByteSize(size->data(), static_cast<int>(size->size()), hint, &nbytes)) {
    case TensorSize::kOk:
      break;
    case TensorSize::kNegativeDimension:
      backend::ThrowError("ValueError", "vm.builtin.alloc_storage: negative size");
    case TensorSize::kTooLarge:
      backend::ThrowError("ValueError",
                          "vm.builtin.alloc_storage: the size does not fit in 64 bits");
  }
  Allocator* alloc = vm->allocator(static_cast<size_t>(index));
  auto storage = ffi::make_object<StorageObj>();
  storage->buffer = alloc->Alloc(nbytes, StorageAlignment(hint), hint);
  storage->allocator = alloc;
  *rv = Storage(std::move(storage));
}

// alloc_tensor(storage, offset, shape, dtype[, scope])
void AllocTensor(PackedArgs args, Any* rv) {
  if (args.size() != 4 && args.size() != 5) {
    backend::ThrowError("TypeError", "vm.builtin.alloc_tensor expects 4 or 5 arguments, got " +
                                         std::to_string(args.size()));
  }
  const auto* storage = args[0].as<StorageObj>();
  if (storage == nullptr) {
    backend::ThrowError("TypeError",
                        "vm.builtin.alloc_tensor: expected a Storage, got " + args[0].GetTypeKey());
  }
  int64_t offset = args[1].cast<int64_t>();
  auto shape = args[2].try_cast<ffi::Shape>();
  if (!shape.has_value()) {
    backend::ThrowError(
        "TypeError", "vm.builtin.alloc_tensor: shape must be a Shape, got " + args[2].GetTypeKey());
  }
  DLDataType dtype = args[3].cast<DLDataType>();
  if (args.size() == 5) RequireGlobalScope(args[4], "vm.builtin.alloc_tensor");
  *rv = const_cast<StorageObj*>(storage)->AllocTensor(offset, *shape, dtype);
}

// A view of another tensor's data with another shape (same dtype, same number of bytes). It
// keeps the source alive; a borrowed DLTensor* (no owner) is viewed as apache-tvm does.
struct ViewAlloc {
  ffi::Optional<ffi::Tensor> source;
  void* data;
  uint64_t byte_offset;
  void AllocData(DLTensor* t) {
    t->data = data;
    t->byte_offset = byte_offset;
  }
  void FreeData(DLTensor*) {}
};

ffi::Tensor Reshape(AnyView value, ffi::Shape new_shape) {
  auto dl_opt = value.try_cast<DLTensor*>();
  if (!dl_opt.has_value()) {
    backend::ThrowError("TypeError",
                        "vm.builtin.reshape expects a Tensor, got " + value.GetTypeKey());
  }
  const DLTensor* dl = *dl_opt;
  if (!ffi::IsContiguous(*dl)) {
    backend::ThrowError("ValueError", "vm.builtin.reshape: the tensor is not contiguous");
  }
  int64_t old_numel = 1, new_numel = 1;
  for (int i = 0; i < dl->ndim; ++i) old_numel *= dl->shape[i];
  for (int64_t d : new_shape) {
    if (d < 0) backend::ThrowError("ValueError", "vm.builtin.reshape: negative dimension");
    new_numel *= d;
  }
  if (old_numel != new_numel) {
    backend::ThrowError("ValueError", "vm.builtin.reshape: cannot view " +
                                          std::to_string(old_numel) + " elements as " +
                                          std::to_string(new_numel));
  }
  ViewAlloc view{value.as<ffi::Tensor>(), dl->data, dl->byte_offset};
  return ffi::Tensor::FromNDAlloc(std::move(view), new_shape, dl->dtype, dl->device);
}

void ToDevice(PackedArgs args, Any* rv) {
  if (args.size() != 3 && args.size() != 4) {
    backend::ThrowError("TypeError", "vm.builtin.to_device expects 3 or 4 arguments");
  }
  ffi::Tensor src = args[0].cast<ffi::Tensor>();
  DLDevice dst{static_cast<DLDeviceType>(args[1].cast<int>()), args[2].cast<int>()};
  if (args.size() == 4) RequireGlobalScope(args[3], "vm.builtin.to_device");
  Allocator* alloc = GetAllocator(dst, static_cast<int>(AllocatorType::kNaive));
  ffi::Tensor out = alloc->Empty(src.shape(), src.dtype());
  CopyTensor(src.GetDLTensorPtr(), out.GetDLTensorPtr(), CopyWait::kFinished);
  *rv = out;
}

ffi::Tensor EnsureZeroOffset(ffi::Tensor data) {
  const DLTensor* dl = data.GetDLTensorPtr();
  if (dl->byte_offset == 0) return data;
  Allocator* alloc = GetAllocator(dl->device, static_cast<int>(AllocatorType::kNaive));
  ffi::Tensor out = alloc->Empty(data.shape(), dl->dtype);
  CopyTensor(dl, out.GetDLTensorPtr(), CopyWait::kFinished);
  return out;
}

}  // namespace

void RegisterMemoryBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def_packed("vm.builtin.alloc_storage", AllocStorage)
      .def_packed("vm.builtin.alloc_tensor", AllocTensor)
      .def_packed("vm.builtin.null_value", [](PackedArgs, Any* rv) { *rv = nullptr; })
      .def_packed("vm.builtin.copy",
                  [](PackedArgs args, Any* rv) {
                    if (args.size() != 1) {
                      backend::ThrowError("TypeError", "vm.builtin.copy expects 1 argument");
                    }
                    *rv = args[0];
                  })
      .def("vm.builtin.reshape", Reshape)
      .def_packed("vm.builtin.to_device", ToDevice)
      .def("vm.builtin.ensure_zero_offset", EnsureZeroOffset)
      .def("vm.builtin.memory_manager.clear", [] { ClearAllocators(); });
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
