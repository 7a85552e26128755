/*
 * The OpenCL ICD loader, opened with dlopen on first use (never at import or registration), so
 * the backend loads on machines without any OpenCL and can say exactly what is missing.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_CL_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_CL_LIBRARY_H_

#include <tvm_runtime/backend/vendor/vendor_library.h>

#include "cl_api.h"

namespace tvm_runtime {
namespace opencl {

/* Environment variable naming the ICD loader to open instead of the default search. */
constexpr const char* kLibraryEnvVar = "TVM_OPENCL_LIBRARY";

/* api (null when loading failed), path (the file the entry points come from), failure (why api
 * is null: what was tried and how to fix it). */
using ClLibrary = backend::VendorApi<ClApi>;

/* Opens the loader on the first call (thread-safe) and returns the same result afterwards.
 * Candidates: $TVM_OPENCL_LIBRARY alone if set, else libOpenCL.so.1 then libOpenCL.so, each from
 * $CONDA_PREFIX/lib first when that is set (backend/vendor_library.h). */
const ClLibrary& GetClLibrary();

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_CL_LIBRARY_H_
