/* Disco's nccl collective library (runtime.disco.nccl.*), registered with the backend. */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_NCCL_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_NCCL_H_

namespace tvm_runtime {
namespace cuda {

/* Environment variable naming the NCCL library to open instead of searching for it. */
constexpr const char* kNcclLibraryEnvVar = "TVM_NCCL_LIBRARY";
/* Registered by the Python hook: () -> list of libnccl.so.2 paths found in pip wheels. */
constexpr const char* kNcclLocatorGlobal = "tvm_runtime.cuda.locate_nccl";

void RegisterNcclGlobals();

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_NCCL_H_
