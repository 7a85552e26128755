/*
 * The short tvm-ffi names the interpreter and the builtins are written with, declared once for
 * the VM's source files (not for vm.h, whose users outside the VM keep the full names).
 */
#ifndef TVM_RUNTIME_CORE_VM_FFI_NAMES_H_
#define TVM_RUNTIME_CORE_VM_FFI_NAMES_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/function.h>

namespace tvm_runtime {
namespace core {
namespace vm {

namespace ffi = ::tvm::ffi;
using ffi::Any;
using ffi::AnyView;
using ffi::PackedArgs;

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_FFI_NAMES_H_
