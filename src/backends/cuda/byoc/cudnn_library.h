/*
 * cuDNN 9 for cudnn_json modules: libcudnn.so.9 (pip: nvidia-cudnn-cu13 for CUDA 13 drivers,
 * nvidia-cudnn-cu12 for CUDA 12), opened when the first cudnn_json module is initialized
 * (pip_library.h says where it is looked for); $TVM_CUDNN_LIBRARY overrides the search.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDNN_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDNN_LIBRARY_H_

#include <string>

#include "byoc/cudnn_api.h"

namespace tvm_runtime {
namespace cuda {

constexpr const char* kCudnnLibraryEnvVar = "TVM_CUDNN_LIBRARY";

/* The entry points, opened on the first call; a RuntimeError naming the pip package otherwise
 * (not cached, so a later call retries after `pip install`). */
const CudnnApi& Cudnn();

/* "" when cuDNN can be opened, else why not (never throws). */
std::string CudnnStatus();

/* Throws a RuntimeError for a failed cuDNN call; `what` names the call and its purpose. */
void CheckCudnn(cudnnStatus_t status, const std::string& what);

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDNN_LIBRARY_H_
