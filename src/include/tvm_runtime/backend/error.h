/*
 * Error plumbing shared by the core and every backend, on top of tvm-ffi's own machinery.
 *
 * C++ code throws tvm::ffi::Error carrying a C++ backtrace (tvm-ffi's TVMFFIBacktrace, led by the
 * line that threw).  At every C boundary (device-API table entries, TVMBackend* functions) the
 * exception is caught by tvm-ffi's safe-call macros, which hand the *whole* error object, backtrace
 * included, to tvm-ffi's thread-local raised slot; the caller rethrows that same object with
 * ThrowRaised/CheckCall, and tvm-ffi finally turns it into a Python exception whose traceback shows
 * the C++ frames.  Nothing is ever thrown across a DSO edge.
 */
#ifndef TVM_RUNTIME_BACKEND_ERROR_H_
#define TVM_RUNTIME_BACKEND_ERROR_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/detail/owned_any.h>
#include <tvm_runtime/backend/message_text.h>

#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

namespace tvm_runtime {
namespace backend {

/* Where an error is thrown.  Defaulted at the call site (GCC/Clang builtins, what C++20's
 * std::source_location does), so the first backtrace frame Python shows is the failing line even
 * in a release build without debug info. */
struct ThrowSite {
  const char* file;
  int line;
  const char* func;
  // NOLINTNEXTLINE(google-explicit-constructor): meant to be default-constructed at call sites.
  ThrowSite(const char* file = __builtin_FILE(), int line = __builtin_LINE(),
            const char* func = __builtin_FUNCTION()) noexcept
      : file(file), line(line), func(func) {}
};

/* Throw an error of `kind` ("ValueError", "RuntimeError", ...) with a plain message and the
 * C++ backtrace of the throwing thread.  Bytes of the message that are not UTF-8 (quoted from a
 * corrupted input) are escaped, so Python always shows the message (message_text.h). */
[[noreturn]] inline void ThrowError(const char* kind, const std::string& message,
                                    ThrowSite site = ThrowSite()) {
  throw ::tvm::ffi::Error(kind, ValidUtf8(message),
                          TVMFFIBacktrace(site.file, site.line, site.func,
                                          /*cross_ffi_boundary=*/0));
}

/* Runs `body`, turning foreign C++ exceptions into kind "InternalError" (what tvm-ffi's own
 * safe-call boundary and apache-tvm 0.27 report for them: tvm.error.InternalError, a
 * RuntimeError) and letting tvm::ffi::Error through untouched. */
template <typename F>
void RunWithFFIErrors(F&& body) {
  try {
    body();
  } catch (const ::tvm::ffi::Error&) {
    throw;
  } catch (const std::exception& err) {
    ThrowError("InternalError", err.what());
  } catch (...) {
    ThrowError("InternalError", "unknown C++ exception");
  }
}

/* Run `body`; on failure hand the error (message and backtrace) to tvm-ffi's raised-error slot
 * and return -1, else return 0.  The C-boundary convention of c_api.h. */
template <typename F>
int GuardCall(F&& body) noexcept {
  TVM_FFI_SAFE_CALL_BEGIN();
  RunWithFFIErrors(body);
  TVM_FFI_SAFE_CALL_END();
}

/* Inverse of GuardCall: a C call returned non-zero, rethrow the raised error object as C++ (its
 * message and backtrace unchanged). */
[[noreturn]] inline void ThrowRaised(ThrowSite site = ThrowSite()) {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  if (handle == nullptr) ThrowError("RuntimeError", "call failed without an error message", site);
  throw TakeOwnedObject<::tvm::ffi::Error>(kTVMFFIError, handle);
}

inline void CheckCall(int rc, ThrowSite site = ThrowSite()) {
  if (rc != 0) ThrowRaised(site);
}

/*
 * Runs `body` at most once per process (per F) and reports the outcome as text: 0 on success,
 * otherwise 1 with the reason in err[0..err_len).  Used by the explicit initialisers of the core
 * and of every backend, which must never throw or abort the interpreter.
 */
template <typename F>
int RunOnceAndReport(F&& body, char* err, size_t err_len) noexcept {
  // A plain mutex rather than std::call_once: call_once pulls in pthread_once@GLIBC_2.34 and
  // would raise the wheel's manylinux floor for no benefit.
  static std::mutex mu;
  static bool done = false;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mu);
  if (!done) {
    done = true;
    try {
      body();
    } catch (const ::tvm::ffi::Error& e) {
      failure = e.kind() + ": " + e.message();
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown C++ exception";
    }
  }
  if (failure.empty()) return 0;
  if (err != nullptr && err_len != 0) std::snprintf(err, err_len, "%s", failure.c_str());
  return 1;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_ERROR_H_
