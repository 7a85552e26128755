/*
 * CUresult -> readable errors.  Every driver call that can fail goes through CheckCu, so a
 * failure always names the call, the CUDA error and what the user can do about it.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_ERROR_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_ERROR_H_

#include <tvm_runtime/backend/status_codes.h>

#include <string>

#include "cuda_api.h"

namespace tvm_runtime {
namespace cuda {

/* Unlike the table-driven backends, CUDA names its codes through the driver (cuda_error.cc). */
struct CuStatusTraits {
  using Code = CUresult;
  static constexpr Code kSuccess = CUDA_SUCCESS;
  /* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", from the driver when it knows the code. */
  static std::string Describe(CUresult result);
  /* What to do about the errors users actually hit, or nullptr. */
  static const char* Hint(CUresult result);
};

/* CuErrorString, ThrowCuError (RuntimeError "<what> failed: <CUDA error>[. what to do about
 * it]") and CheckCu (unless CUDA_SUCCESS). */
TVM_RUNTIME_STATUS_FUNCTIONS(backend::DriverNamedStatus<CuStatusTraits>, CuErrorString,
                             ThrowCuError, CheckCu);

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_ERROR_H_
