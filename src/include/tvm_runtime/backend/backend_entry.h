/*
 * The two extern "C" entry points every backend DSO exports (see tvm_runtime/c_api.h, part 3).
 *
 * Usage, in exactly one .cc of a backend:
 *     static void RegisterMyBackend() { ...TVMRuntimeRegisterDeviceAPI(...), loaders... }
 *     TVM_RUNTIME_DEFINE_BACKEND_ENTRY(RegisterMyBackend)
 *
 * Registration runs at most once per process, never in a static constructor, and never lets an
 * exception escape: a failure is reported as text to the Python hook, which turns it into a
 * warning, so `import tvm` always survives a broken backend.
 */
#ifndef TVM_RUNTIME_BACKEND_BACKEND_ENTRY_H_
#define TVM_RUNTIME_BACKEND_BACKEND_ENTRY_H_

#include <tvm_runtime/backend/detail/abi_version.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <string>

namespace tvm_runtime {
namespace backend {

/* Runs a backend's registration once, after checking the loaded core's ABI version. */
template <typename F>
int RunRegistrationOnce(F&& body, char* err, size_t err_len) noexcept {
  return RunOnceAndReport(
      [&] {
        // The Python hook checks the version too; checking here covers direct C users.
        uint32_t core = TVMRuntimeGetABIVersion();
        if (!TVMRuntimeABICompatible(core, TVM_RUNTIME_ABI_VERSION)) {
          ThrowError("RuntimeError",
                     "backend " + DescribeABIMismatch(TVM_RUNTIME_ABI_VERSION, core));
        }
        body();
      },
      err, err_len);
}

/* Registers `table` with the core, rethrowing its error as C++ (for use inside the body). */
inline void RegisterDeviceAPI(const TVMRuntimeDeviceAPI& table) {
  CheckCall(TVMRuntimeRegisterDeviceAPI(&table, /*allow_override=*/0));
}

}  // namespace backend
}  // namespace tvm_runtime

#define TVM_RUNTIME_DEFINE_BACKEND_ENTRY(RegisterFn)                                        \
  extern "C" TVM_RUNTIME_DLL uint32_t TVMRuntimeBackendABIVersion(void) {                   \
    return TVM_RUNTIME_ABI_VERSION;                                                         \
  }                                                                                         \
  extern "C" TVM_RUNTIME_DLL int TVMRuntimeBackendRegister(char* err, size_t err_len) {     \
    return ::tvm_runtime::backend::RunRegistrationOnce([] { RegisterFn(); }, err, err_len); \
  }

#endif  // TVM_RUNTIME_BACKEND_BACKEND_ENTRY_H_
