/*
 * OpenCL status codes as readable exceptions (backend/status_codes.h does the work; this
 * backend only provides the table of names, in cl_error.cc).
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_CL_ERROR_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_CL_ERROR_H_

#include <tvm_runtime/backend/status_codes.h>

#include <cstddef>
#include <string>

#include "cl_api.h"

namespace tvm_runtime {
namespace opencl {

TVM_RUNTIME_STATUS_TABLE(ClStatus, cl_int, CL_SUCCESS, "OpenCL", "CL error ");

/* ClErrorString: "CL_INVALID_VALUE (-30)"; unknown codes come back as "CL error -1234".
 * ThrowClError: RuntimeError "OpenCL error CL_... (-N) in <what>"; CheckCl: unless CL_SUCCESS. */
TVM_RUNTIME_STATUS_FUNCTIONS(ClStatus, ClErrorString, ThrowClError, CheckCl);

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_CL_ERROR_H_
