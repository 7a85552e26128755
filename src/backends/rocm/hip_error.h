/*
 * hipError_t -> readable errors.  Every HIP call that can fail goes through CheckHip, so a
 * failure names the call, the HIP error and, for the errors users hit, what to do about it.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_HIP_ERROR_H_
#define TVM_RUNTIME_BACKENDS_ROCM_HIP_ERROR_H_

#include <tvm_runtime/backend/status_codes.h>

#include <string>

#include "hip_api.h"

namespace tvm_runtime {
namespace rocm {

/* HIP names its codes through the runtime library (hip_error.cc). */
struct HipStatusTraits {
  using Code = hipError_t;
  static constexpr Code kSuccess = hipSuccess;
  /* "hipErrorOutOfMemory (out of memory)", from the runtime when it knows the code. */
  static std::string Describe(hipError_t result);
  /* What to do about the errors users hit, or nullptr. */
  static const char* Hint(hipError_t result);
};

/* HipErrorString, ThrowHipError (RuntimeError "<what> failed: <HIP error>[. what to do about
 * it]") and CheckHip (unless hipSuccess). */
TVM_RUNTIME_STATUS_FUNCTIONS(backend::DriverNamedStatus<HipStatusTraits>, HipErrorString,
                             ThrowHipError, CheckHip);

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_HIP_ERROR_H_
