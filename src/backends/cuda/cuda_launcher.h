/*
 * The callable behind `mod[kernel_name]`: what TVM host code calls after __tvm_set_device,
 * with [kernel params per arg_types] [one int per launch tag] [dyn smem bytes if tagged].
 * It packs the params as the void* array cuLaunchKernel wants (32-bit scalars narrowed,
 * CUtensorMap args passed by pointer) and launches on the stream of the tvm-ffi stream context.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_LAUNCHER_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_LAUNCHER_H_

#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/gpu/device_module.h>

#include <string>
#include <vector>

#include "cuda_api.h"

namespace tvm_runtime {
namespace cuda {

class CudaModule;
struct LoadedImage;

class CudaLauncher {
 public:
  CudaLauncher(CudaModule* module, size_t index, const backend::FunctionInfo& info);
  void operator()(const TVMFFIAny* args, int32_t num_args) const;

 private:
  CUfunction Function(const LoadedImage& image) const;
  void AllowDynSmem(const LoadedImage& image, CUfunction f, size_t bytes) const;
  CUresult LaunchEx(CUfunction f, const backend::LaunchDims& dims, CUstream stream,
                    void** params) const;
  [[noreturn]] void ThrowLaunchError(CUresult rc, const LoadedImage& image,
                                     const backend::LaunchDims& dims) const;

  CudaModule* module_;  // kept alive by the packed function that owns this launcher
  size_t index_;        // kernel index in the module's function table
  backend::KernelSignature sig_;
  std::vector<bool> by_pointer_;  // kTensorMap args: the param *is* the host pointer
  bool needs_launch_ex_;
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_LAUNCHER_H_
