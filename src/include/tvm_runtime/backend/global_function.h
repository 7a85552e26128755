/*
 * How a backend registers global functions (tvm_runtime/c_api.h, part 4): one way for every
 * backend, always replacing an existing function of the same name (a backend DSO that is loaded
 * again re-registers its own functions instead of failing), and with the function's name in the
 * errors tvm-ffi raises for arguments of the wrong type.  Private globals are named by the
 * convention of c_api.h 4e: `tvm_runtime.<backend name>.<snake_case>`.
 */
#ifndef TVM_RUNTIME_BACKEND_GLOBAL_FUNCTION_H_
#define TVM_RUNTIME_BACKEND_GLOBAL_FUNCTION_H_

#include <tvm/ffi/function.h>

#include <string>
#include <utility>

namespace tvm_runtime {
namespace backend {

/* "tvm_runtime.<backend>.<name>": a global private to one backend wheel (c_api.h 4e). */
inline std::string PrivateGlobalName(const char* backend, const char* name) {
  return std::string("tvm_runtime.") + backend + "." + name;
}

/* Registers `func` (a callable with tvm-ffi argument types) as the global `name`. */
template <typename F>
void SetGlobalFunction(const std::string& name, F&& func) {
  ::tvm::ffi::Function::SetGlobal(name,
                                  ::tvm::ffi::Function::FromTyped(std::forward<F>(func), name),
                                  /*override=*/true);
}

/* Registers `func(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any* rv)` as the global `name`. */
template <typename F>
void SetGlobalPackedFunction(const std::string& name, F&& func) {
  ::tvm::ffi::Function::SetGlobal(name, ::tvm::ffi::Function::FromPacked(std::forward<F>(func)),
                                  /*override=*/true);
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GLOBAL_FUNCTION_H_
