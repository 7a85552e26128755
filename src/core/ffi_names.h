/*
 * The short tvm-ffi names the interpreter, the VM builtins and the language-model builtins are
 * written with, declared once for their source files (not for headers such as vm.h, whose users
 * elsewhere keep the full names).
 */
#ifndef TVM_RUNTIME_CORE_FFI_NAMES_H_
#define TVM_RUNTIME_CORE_FFI_NAMES_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/function.h>

namespace tvm_runtime {
namespace core {

namespace ffi = ::tvm::ffi;
using ffi::Any;
using ffi::AnyView;
using ffi::PackedArgs;

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_FFI_NAMES_H_
