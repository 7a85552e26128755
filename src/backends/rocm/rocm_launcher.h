/*
 * The callable behind `mod[kernel_name]`: what TVM host code calls after __tvm_set_device,
 * with [kernel params per arg_types] [one int per launch tag] [dyn smem bytes if tagged].
 * As apache-tvm 0.27 does, it packs the params into one argument buffer (each value aligned to
 * its size) passed through hipModuleLaunchKernel's `extra`, and launches on the stream of the
 * tvm-ffi stream context.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_ROCM_LAUNCHER_H_
#define TVM_RUNTIME_BACKENDS_ROCM_ROCM_LAUNCHER_H_

#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/kernel_params.h>

namespace tvm_runtime {
namespace rocm {

class RocmModule;

class RocmLauncher {
 public:
  RocmLauncher(RocmModule* module, size_t index, const backend::FunctionInfo& info);
  void operator()(const TVMFFIAny* args, int32_t num_args) const;

 private:
  RocmModule* module_;  // kept alive by the packed function that owns this launcher
  size_t index_;        // kernel index in the module's function table
  backend::KernelSignature sig_;
  backend::PackedArgLayout layout_;
};

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_ROCM_LAUNCHER_H_
