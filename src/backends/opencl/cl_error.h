/*
 * Turning OpenCL status codes into readable exceptions.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_CL_ERROR_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_CL_ERROR_H_

#include <string>

#include "cl_api.h"

namespace tvm_runtime {
namespace opencl {

/* "CL_INVALID_VALUE (-30)"; unknown codes come back as "CL error -1234". */
std::string ClErrorString(cl_int code);

/* Throws RuntimeError "OpenCL error CL_... (-N) in <what>" unless code == CL_SUCCESS. */
[[noreturn]] void ThrowClError(cl_int code, const std::string& what);

inline void CheckCl(cl_int code, const char* what) {
  if (code != CL_SUCCESS) ThrowClError(code, what);
}

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_CL_ERROR_H_
