/*
 * The CUDA driver library, opened with dlopen on first device use (never at import or
 * registration), so the backend loads on machines without a GPU or driver and can say exactly
 * what is missing.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_LIBRARY_H_

#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <string>

#include "cuda_api.h"

namespace tvm_runtime {
namespace cuda {

/* Environment variable naming the driver library to open instead of libcuda.so.1. */
constexpr const char* kDriverLibraryEnvVar = "TVM_CUDA_DRIVER_LIBRARY";

/* api (null when loading failed), path (the file the entry points come from), failure (why api
 * is null: what was tried and how to fix it). */
using CudaLibrary = backend::VendorApi<CuApi>;

/* Opens the driver on the first call (thread-safe) and returns the same result afterwards. */
const CudaLibrary& GetCudaLibrary();

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_LIBRARY_H_
