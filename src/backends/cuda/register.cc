/*
 * Entry points of libtvm_runtime_cuda.so.  Registration runs when the Python hook calls
 * TVMRuntimeBackendRegister, never in a static constructor, and does not touch CUDA: the
 * driver is opened on first device use, NVRTC on the first source compile, cuBLASLt and cuDNN
 * when the first cublas_json or cudnn_json module is initialized.
 */
#include <tvm_runtime/backend/backend_entry.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_module.h>

#include <string>

#include "byoc/cublaslt_library.h"
#include "byoc/cudnn_library.h"
#include "cuda_device_api.h"
#include "cuda_globals.h"
#include "cuda_module.h"
#include "cuda_nccl.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

void RegisterCublasJsonRuntime();
void RegisterCudnnJsonRuntime();
void RegisterCudartProvider();
void RegisterCudaGraphGlobals();  // vm.builtin.cuda_graph.* (cuda_graph.cc)
void RegisterTensorMapGlobals();  // runtime.cuTensorMapEncodeTiled (cuda_tensor_map.cc)

void RegisterCudaBackend() {
  // Leaked: the core keeps the tables (and these pointers) for the life of the process.
  static CudaDeviceAPI* device_api = new CudaDeviceAPI();
  static CudaHostDeviceAPI* host_api = new CudaHostDeviceAPI();
  backend::RegisterDeviceAPI(backend::MakeDeviceAPITable(device_api, kDeviceTypeCUDA, "cuda"));
  backend::RegisterDeviceAPI(
      backend::MakeDeviceAPITable(host_api, kDeviceTypeCUDAHost, "cuda_host"));
  // Replaces the core's placeholder that asks the user to install this wheel.
  backend::RegisterModuleLoader("cuda",
                                [](const std::string& payload) { return LoadCudaModule(payload); });
  RegisterCompilerGlobals();
  RegisterEventGlobals();
  RegisterNcclGlobals();  // Disco's runtime.disco.nccl.*
  RegisterCudaGraphGlobals();
  // External-codegen (BYOC) modules; their vendor library is opened on first use.
  RegisterCublasJsonRuntime();
  RegisterCudnnJsonRuntime();
  RegisterCudartProvider();  // for host code that links libcudart (CUTLASS kernels)
  RegisterTensorMapGlobals();
  backend::SetGlobalFunction(backend::PrivateGlobalName("cuda", "cublaslt_status"),
                             []() { return CublasLtStatus(); });
  backend::SetGlobalFunction(backend::PrivateGlobalName("cuda", "cudnn_status"),
                             []() { return CudnnStatus(); });
}

}  // namespace cuda
}  // namespace tvm_runtime

TVM_RUNTIME_DEFINE_BACKEND_ENTRY(::tvm_runtime::cuda::RegisterCudaBackend)
