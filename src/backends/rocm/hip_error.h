/*
 * hipError_t -> readable errors.  Every HIP call that can fail goes through CheckHip, so a
 * failure names the call, the HIP error and, for the errors users hit, what to do about it.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_HIP_ERROR_H_
#define TVM_RUNTIME_BACKENDS_ROCM_HIP_ERROR_H_

#include <tvm_runtime/backend/error.h>

#include <string>

#include "hip_api.h"

namespace tvm_runtime {
namespace rocm {

/* "hipErrorOutOfMemory (out of memory)", from the runtime when it knows the code. */
std::string HipErrorString(hipError_t result);

/* Throws RuntimeError "<what> failed: <HIP error>[. what to do about it]". */
[[noreturn]] void ThrowHipError(hipError_t result, const std::string& what,
                                backend::ThrowSite site = backend::ThrowSite());

inline void CheckHip(hipError_t result, const char* what,
                     backend::ThrowSite site = backend::ThrowSite()) {
  if (result != hipSuccess) ThrowHipError(result, what, site);
}

inline void CheckHip(hipError_t result, const std::string& what,
                     backend::ThrowSite site = backend::ThrowSite()) {
  if (result != hipSuccess) ThrowHipError(result, what, site);
}

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_HIP_ERROR_H_
