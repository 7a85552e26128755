/* Disco's rccl collective library (runtime.disco.rccl.*), registered with the backend. */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_ROCM_RCCL_H_
#define TVM_RUNTIME_BACKENDS_ROCM_ROCM_RCCL_H_

namespace tvm_runtime {
namespace rocm {

/* Environment variable naming the RCCL library to open instead of searching for it. */
constexpr const char* kRcclLibraryEnvVar = "TVM_RCCL_LIBRARY";

void RegisterRcclGlobals();

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_ROCM_RCCL_H_
