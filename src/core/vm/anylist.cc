/*
 * AnyList C API used by Relax models compiled with exec_mode="compiled": the generated
 * `__vmtir__<func>` code keeps VM registers, constants and functions in arrays of ffi::Any
 * ("AnyLists", 16 bytes per slot) and moves values between them and packed-call argument stacks
 * through these three functions (imported by the artifact as undefined symbols).
 * All return 0 on success and -1 with tvm-ffi's raised error set on failure.
 */
#include <tvm/ffi/any.h>
#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

extern "C" {

/* args[arg_offset] = anylist[index], as a borrowed view (the list keeps the reference). */
TVM_RUNTIME_DLL int TVMBackendAnyListSetPackedArg(void* anylist, int index, TVMFFIAny* args,
                                                  int arg_offset) {
  return tvm_runtime::backend::GuardCall([&] {
    const auto* list = static_cast<const TVMFFIAny*>(anylist);
    args[arg_offset] = list[index];
  });
}

/* anylist[index] = None, releasing what it held. */
TVM_RUNTIME_DLL int TVMBackendAnyListResetItem(void* anylist, int index) {
  return tvm_runtime::backend::GuardCall([&] {
    auto* list = static_cast<::tvm::ffi::Any*>(anylist);
    list[index] = nullptr;
  });
}

/* anylist[index] = args[ret_offset], taking over the reference the return slot owned. */
TVM_RUNTIME_DLL int TVMBackendAnyListMoveFromPackedReturn(void* anylist, int index, TVMFFIAny* args,
                                                          int ret_offset) {
  return tvm_runtime::backend::GuardCall([&] {
    auto* list = static_cast<::tvm::ffi::Any*>(anylist);
    list[index] = tvm_runtime::backend::TakeOwnedAny(&args[ret_offset]);
  });
}

}  // extern "C"
