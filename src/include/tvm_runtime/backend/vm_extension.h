/*
 * Per-VM state for builtins that live in a backend wheel.  Some builtins the compiler emits
 * (vm.builtin.cuda_graph.*) keep state that belongs to one Relax VM: it must be found again on
 * the next call of the same VM and be released when that VM goes.  The core keeps such objects
 * in the VM, by key, and hands them out through one global, so no C++ type crosses the wheel
 * boundary: the object is any tvm-ffi object the backend defines (its deleter runs in the
 * backend's DSO when the VM releases it).
 */
#ifndef TVM_RUNTIME_BACKEND_VM_EXTENSION_H_
#define TVM_RUNTIME_BACKEND_VM_EXTENSION_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <string>

namespace tvm_runtime {
namespace backend {

/* (vm_context, key: str, factory: () -> Object) -> Object, registered by the core. */
constexpr const char* kVMExtensionGlobal = "tvm_runtime.vm.get_or_create_extension";

/* The object of type `Obj` the VM behind `vm_context` keeps under `key`, made by
 * `factory()` (an ObjectRef holding an Obj) on first use.  The VM owns it: the pointer stays
 * valid as long as that VM does. */
template <typename Obj, typename Factory>
Obj* GetOrCreateVMExtension(const ::tvm::ffi::AnyView& vm_context, const std::string& key,
                            Factory factory) {
  static const ::tvm::ffi::Function get = [] {
    auto f = ::tvm::ffi::Function::GetGlobal(kVMExtensionGlobal);
    if (!f.has_value()) {
      ThrowError("RuntimeError", std::string(kVMExtensionGlobal) +
                                     " is not registered: this backend needs a newer tvm-runtime "
                                     "(pip install -U tvm-runtime)");
    }
    return *f;
  }();
  ::tvm::ffi::Function make =
      ::tvm::ffi::Function::FromTyped([factory]() -> ::tvm::ffi::ObjectRef { return factory(); });
  ::tvm::ffi::ObjectRef ext =
      get(vm_context, ::tvm::ffi::String(key), make).cast<::tvm::ffi::ObjectRef>();
  auto* obj = const_cast<Obj*>(ext.as<Obj>());
  if (obj == nullptr) {
    ThrowError("TypeError", "the VM keeps a " + std::string(ext->GetTypeKey()) + " under '" + key +
                                "', not a " + Obj::_type_key);
  }
  return obj;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_VM_EXTENSION_H_
