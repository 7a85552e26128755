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

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace tvm_runtime {
namespace backend {

template <typename F>
int RunRegistrationOnce(F&& body, char* err, size_t err_len) noexcept {
  // A plain mutex rather than std::call_once: call_once pulls in pthread_once@GLIBC_2.34 and
  // would raise the wheel's manylinux floor for no benefit.
  static std::mutex mu;
  static bool done = false;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mu);
  if (!done) {
    done = true;
    try {
      // The core checks the table version too, but comparing here gives a better message.
      uint32_t core = TVMRuntimeGetABIVersion();
      if ((core >> 16) != TVM_RUNTIME_ABI_VERSION_MAJOR ||
          (core & 0xFFFF) < TVM_RUNTIME_ABI_VERSION_MINOR) {
        failure = "backend was built for core ABI " +
                  std::to_string(TVM_RUNTIME_ABI_VERSION_MAJOR) + "." +
                  std::to_string(TVM_RUNTIME_ABI_VERSION_MINOR) + " but the loaded core has " +
                  std::to_string(core >> 16) + "." + std::to_string(core & 0xFFFF);
      } else {
        body();
      }
    } catch (const ::tvm::ffi::Error& e) {
      failure = e.kind() + ": " + e.message();
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown C++ exception during registration";
    }
  }
  if (failure.empty()) return 0;
  if (err != nullptr && err_len != 0) std::snprintf(err, err_len, "%s", failure.c_str());
  return 1;
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
