/*
 * cuBLASLt for cublas_json modules: libcublasLt.so.13 (pip: nvidia-cublas, CUDA 13 drivers) or
 * libcublasLt.so.12 (nvidia-cublas-cu12), opened when the first cublas_json module runs
 * (pip_library.h says where it is looked for); $TVM_CUBLASLT_LIBRARY overrides the search.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUBLASLT_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUBLASLT_LIBRARY_H_

#include <string>

#include "byoc/cublaslt_api.h"

namespace tvm_runtime {
namespace cuda {

constexpr const char* kCublasLtLibraryEnvVar = "TVM_CUBLASLT_LIBRARY";

/* The entry points, opened on the first call; a RuntimeError naming the pip package otherwise
 * (not cached, so a later call retries after `pip install`). */
const CublasLtApi& CublasLt();

/* "" when cuBLASLt can be opened, else why not (never throws). */
std::string CublasLtStatus();

/* Throws a RuntimeError for a failed cuBLASLt call; `what` names the call and its purpose. */
void CheckCublas(cublasStatus_t status, const std::string& what);

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUBLASLT_LIBRARY_H_
