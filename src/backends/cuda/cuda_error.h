/*
 * CUresult -> readable errors.  Every driver call that can fail goes through CheckCu, so a
 * failure always names the call, the CUDA error and what the user can do about it.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_ERROR_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_ERROR_H_

#include <tvm_runtime/backend/error.h>

#include <string>

#include "cuda_api.h"

namespace tvm_runtime {
namespace cuda {

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", from the driver when it knows the code. */
std::string CuErrorString(CUresult result);

/* Throws RuntimeError "<what> failed: <CUDA error>[. what to do about it]".  Unlike the
 * table-driven backends (backend/status_codes.h), CUDA names its codes through the driver. */
[[noreturn]] void ThrowCuError(CUresult result, const std::string& what,
                               backend::ThrowSite site = backend::ThrowSite());

inline void CheckCu(CUresult result, const char* what,
                    backend::ThrowSite site = backend::ThrowSite()) {
  if (result != CUDA_SUCCESS) ThrowCuError(result, what, site);
}

inline void CheckCu(CUresult result, const std::string& what,
                    backend::ThrowSite site = backend::ThrowSite()) {
  if (result != CUDA_SUCCESS) ThrowCuError(result, what, site);
}

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_ERROR_H_
