/*
 * Error plumbing shared by the core and every backend.
 *
 * C++ code throws tvm::ffi::Error; at every C boundary (device-API table entries, backend entry
 * points) the exception is caught and turned into tvm-ffi's thread-local raised error, which the
 * caller picks up with TVMFFIErrorMoveFromRaised.  Nothing is ever thrown across a DSO edge.
 */
#ifndef TVM_RUNTIME_BACKEND_ERROR_H_
#define TVM_RUNTIME_BACKEND_ERROR_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/error.h>

#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

namespace tvm_runtime {
namespace backend {

/* Throw an error of `kind` ("ValueError", "RuntimeError", ...) with a plain message. */
[[noreturn]] inline void ThrowError(const char* kind, const std::string& message) {
  throw ::tvm::ffi::Error(kind, message, std::string());
}

/* Run `body`; convert any exception into tvm-ffi's raised error and return -1. */
template <typename F>
int GuardCall(F&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const ::tvm::ffi::Error& err) {
    TVMFFIErrorSetRaisedFromCStr(err.kind().c_str(), err.message().c_str());
  } catch (const std::exception& err) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", err.what());
  } catch (...) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "unknown C++ exception");
  }
  return -1;
}

/* Inverse of GuardCall: a C call returned non-zero, rethrow the raised error as C++. */
inline void ThrowRaised() {
  TVMFFIObjectHandle handle = nullptr;
  TVMFFIErrorMoveFromRaised(&handle);
  if (handle == nullptr) ThrowError("RuntimeError", "call failed without an error message");
  throw ::tvm::ffi::detail::ObjectUnsafe::ObjectRefFromObjectPtr<::tvm::ffi::Error>(
      ::tvm::ffi::detail::ObjectUnsafe::ObjectPtrFromOwned<::tvm::ffi::Object>(
          static_cast<TVMFFIObject*>(handle)));
}

inline void CheckCall(int rc) {
  if (rc != 0) ThrowRaised();
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
