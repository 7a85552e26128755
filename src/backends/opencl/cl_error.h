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

struct ClStatusTraits {
  using Code = cl_int;
  static constexpr Code kSuccess = CL_SUCCESS;
  static constexpr const char* kApi = "OpenCL";
  static constexpr const char* kUnknownPrefix = "CL error ";
  static const backend::StatusName<cl_int>* Names(size_t* count);
};
using ClStatus = backend::VendorStatus<ClStatusTraits>;

/* "CL_INVALID_VALUE (-30)"; unknown codes come back as "CL error -1234". */
inline std::string ClErrorString(cl_int code) { return ClStatus::Describe(code); }

/* Throws RuntimeError "OpenCL error CL_... (-N) in <what>". */
[[noreturn]] inline void ThrowClError(cl_int code, const std::string& what,
                                      backend::ThrowSite site = backend::ThrowSite()) {
  ClStatus::Throw(code, what, site);
}

/* ThrowClError unless code == CL_SUCCESS. */
inline void CheckCl(cl_int code, const char* what, backend::ThrowSite site = backend::ThrowSite()) {
  ClStatus::Check(code, what, site);
}

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_CL_ERROR_H_
