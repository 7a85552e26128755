/*
 * VM builtins for tuples, closures and control flow (apache-tvm 0.27 names and signatures):
 *   vm.builtin.make_tuple(*fields) -> Array        vm.builtin.tuple_getitem(Array, i) -> field
 *   vm.builtin.tuple_reset_item(Array, i)           (drops a field's reference in place)
 *   vm.builtin.make_closure(closure, *bound) -> closure with trailing arguments bound
 *   vm.builtin.invoke_closure(vm, closure, *args) -> result
 *   vm.builtin.call_tir_dyn(func, *args, Shape extra) -> func(*args, *extra)
 *   vm.builtin.read_if_cond(bool | integer tensor) -> bool
 *   vm.builtin.invoke_debug_func(io_effect, func_name, line_info, *args)
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/vm_extension.h>

#include <string>
#include <vector>

#include "../ffi_names.h"
#include "allocators.h"
#include "vm.h"
#include "vm_init.h"

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

const ffi::ArrayObj* RequireTuple(const AnyView& v, const char* who) {
  const auto* arr = v.as<ffi::ArrayObj>();
  if (arr == nullptr) {
    backend::ThrowError("TypeError", std::string(who) + " expects a tuple, got " + v.GetTypeKey());
  }
  return arr;
}

int64_t RequireIndex(const ffi::ArrayObj* arr, int64_t index, const char* who) {
  if (index < 0 || index >= static_cast<int64_t>(arr->size())) {
    backend::ThrowError("IndexError", std::string(who) + ": index " + std::to_string(index) +
                                          " out of range for a tuple of " +
                                          std::to_string(arr->size()));
  }
  return index;
}

void MakeTuple(PackedArgs args, Any* rv) {
  ffi::Array<Any> out;
  out.reserve(args.size());
  for (int i = 0; i < args.size(); ++i) out.push_back(args[i]);
  *rv = std::move(out);
}

void TupleGetItem(PackedArgs args, Any* rv) {
  if (args.size() != 2) backend::ThrowError("TypeError", "tuple_getitem expects 2 arguments");
  const ffi::ArrayObj* arr = RequireTuple(args[0], "vm.builtin.tuple_getitem");
  *rv = (*arr)[RequireIndex(arr, args[1].cast<int64_t>(), "vm.builtin.tuple_getitem")];
}

void TupleResetItem(AnyView tuple, int64_t index) {
  const ffi::ArrayObj* arr = RequireTuple(tuple, "vm.builtin.tuple_reset_item");
  const_cast<ffi::ArrayObj*>(arr)->SetItem(RequireIndex(arr, index, "vm.builtin.tuple_reset_item"),
                                           Any());
}

void MakeClosure(PackedArgs args, Any* rv) {
  if (args.size() < 1) backend::ThrowError("TypeError", "make_closure needs a closure");
  const auto* clo = args[0].as<VMClosureObj>();
  if (clo == nullptr) {
    backend::ThrowError(
        "TypeError", "vm.builtin.make_closure expects a VM closure, got " + args[0].GetTypeKey());
  }
  std::vector<Any> bound(args.data() + 1, args.data() + args.size());
  *rv = VMClosure(clo->func_name, BindLastArgs(clo->impl, std::move(bound)));
}

void InvokeClosure(PackedArgs args, Any* rv) {
  if (args.size() < 2) {
    backend::ThrowError("TypeError", "vm.builtin.invoke_closure(vm, closure, *args)");
  }
  VirtualMachine* vm = VirtualMachine::FromContext(args[0]);
  vm->InvokeClosurePacked(args[1], args.data() + 2, args.size() - 2, rv);
}

void CallTIRDyn(PackedArgs args, Any* rv) {
  if (args.size() < 2)
    backend::ThrowError("TypeError", "vm.builtin.call_tir_dyn: too few arguments");
  ffi::Function func = args[0].cast<ffi::Function>();
  ffi::Shape extra = args[args.size() - 1].cast<ffi::Shape>();
  std::vector<AnyView> all(args.data() + 1, args.data() + args.size() - 1);
  for (int64_t v : extra) all.emplace_back(v);
  func.CallPacked(all.data(), static_cast<int32_t>(all.size()), rv);
}

bool ReadIfCond(AnyView cond) {
  if (cond.type_index() == ffi::TypeIndex::kTVMFFIBool ||
      cond.type_index() == ffi::TypeIndex::kTVMFFIInt) {
    return cond.cast<int64_t>() != 0;
  }
  auto t = cond.try_cast<ffi::Tensor>();
  if (!t.has_value()) {
    backend::ThrowError("TypeError", "vm.builtin.read_if_cond expects a bool or a tensor, got " +
                                         cond.GetTypeKey());
  }
  const DLTensor* dl = t->GetDLTensorPtr();
  if (dl->dtype.code != kDLInt && dl->dtype.code != kDLUInt && dl->dtype.code != kDLBool) {
    backend::ThrowError("TypeError",
                        "vm.builtin.read_if_cond: the condition must be a boolean or "
                        "integer tensor");
  }
  // Read the first element on the host.
  int64_t bytes = (dl->dtype.bits + 7) / 8;
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
    backend::ThrowError("TypeError", "vm.builtin.read_if_cond: unsupported condition width");
  }
  int64_t numel = 1;
  for (int i = 0; i < dl->ndim; ++i) numel *= dl->shape[i];
  if (numel < 1) backend::ThrowError("ValueError", "vm.builtin.read_if_cond: empty condition");
  ffi::Tensor host = *t;
  if (dl->device.device_type != kDLCPU) {
    host = GetAllocator(DLDevice{kDLCPU, 0}, static_cast<int>(AllocatorType::kNaive))
               ->Empty(t->shape(), dl->dtype);
    CopyTensor(dl, host.GetDLTensorPtr(), CopyWait::kFinished);
  }
  const DLTensor* h = host.GetDLTensorPtr();
  const char* p = static_cast<const char*>(h->data) + h->byte_offset;
  switch (bytes) {
    case 1:
      return *reinterpret_cast<const int8_t*>(p) != 0;
    case 2:
      return *reinterpret_cast<const int16_t*>(p) != 0;
    case 4:
      return *reinterpret_cast<const int32_t*>(p) != 0;
    default:
      return *reinterpret_cast<const int64_t*>(p) != 0;
  }
}

void InvokeDebugFunc(PackedArgs args, Any* rv) {
  if (args.size() < 3) {
    backend::ThrowError("TypeError", "invoke_debug_func(io_effect, func_name, line_info, *args)");
  }
  if (args[0] != nullptr) {
    backend::ThrowError("ValueError", "IOEffect is expected to be lowered to None.");
  }
  std::string name = args[1].cast<std::string>();
  auto f = ffi::Function::GetGlobal(name);
  if (!f.has_value()) {
    backend::ThrowError("ValueError", name +
                                          " is not found. Register it with "
                                          "@tvm.register_global_func(\"" +
                                          name + "\").");
  }
  std::vector<AnyView> call(args.data() + 2, args.data() + args.size());
  Any ignored;
  f->CallPacked(call.data(), static_cast<int32_t>(call.size()), &ignored);
  *rv = nullptr;
}

}  // namespace

void RegisterControlBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def_packed("vm.builtin.make_tuple", MakeTuple)
      .def_packed("vm.builtin.tuple_getitem", TupleGetItem)
      .def("vm.builtin.tuple_reset_item", TupleResetItem)
      .def_packed("vm.builtin.make_closure", MakeClosure)
      .def_packed("vm.builtin.invoke_closure", InvokeClosure)
      .def_packed("vm.builtin.call_tir_dyn", CallTIRDyn)
      .def("vm.builtin.read_if_cond", ReadIfCond)
      .def_packed("vm.builtin.invoke_debug_func", InvokeDebugFunc);
  // For builtins in backend wheels that keep per-VM state (backend/vm_extension.h).
  refl::GlobalDef().def(backend::kVMExtensionGlobal, [](AnyView ctx, const std::string& key,
                                                        const ffi::Function& factory) {
    return VirtualMachine::FromContext(ctx)->GetOrCreateExtension(key, factory);
  });
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
