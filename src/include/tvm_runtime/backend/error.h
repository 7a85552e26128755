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

#include <exception>
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

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_ERROR_H_
