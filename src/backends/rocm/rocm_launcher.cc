#include "rocm_launcher.h"

#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/kernel_image_module.h>

#include "hip_error.h"
#include "rocm_module.h"
#include "rocm_runtime.h"

namespace tvm_runtime {
namespace rocm {

RocmLauncher::RocmLauncher(RocmModule* module, size_t index, const backend::FunctionInfo& info)
    : module_(module), index_(index), sig_(info), layout_(sig_.args) {
  if (sig_.plan.uses_cluster() || sig_.plan.cooperative_launch() ||
      sig_.plan.programmatic_dependent_launch()) {
    backend::ThrowError("ValueError", "kernel '" + sig_.name +
                                          "' asks for thread-block clusters, cooperative or "
                                          "programmatic dependent launch, which ROCm kernels of "
                                          "apache-tvm 0.27 never use; the artifact is corrupted");
  }
}

void RocmLauncher::operator()(const TVMFFIAny* args, int32_t num_args) const {
  sig_.CheckArity(num_args);
  const int32_t device_id = backend::CurrentDevice<kDeviceTypeROCM>();
  RocmRuntime& rt = RocmRuntime::Global();
  RocmDevice& device = rt.Device(device_id);
  HipImage& image = *module_->GetImage(device_id);
  hipFunction_t f = image.functions[index_];
  if (f == nullptr) backend::ThrowKernelNotInImage(sig_.name, device.Describe());
  rt.MakeCurrent(device);

  backend::PackedArgBuffer buffer(sig_.args, layout_, args);
  void* extra[] = {reinterpret_cast<void*>(kHipLaunchParamBufferPointer), buffer.data(),
                   reinterpret_cast<void*>(kHipLaunchParamBufferSize), buffer.size_ptr(),
                   reinterpret_cast<void*>(kHipLaunchParamEnd)};
  const backend::LaunchDims dims = sig_.plan.Extract(args);
  auto stream = static_cast<hipStream_t>(TVMFFIEnvGetStream(kDeviceTypeROCM, device_id));
  hipError_t rc = image.api->ModuleLaunchKernel(
      f, static_cast<unsigned>(dims.grid(0)), static_cast<unsigned>(dims.grid(1)),
      static_cast<unsigned>(dims.grid(2)), static_cast<unsigned>(dims.block(0)),
      static_cast<unsigned>(dims.block(1)), static_cast<unsigned>(dims.block(2)),
      static_cast<unsigned>(dims.dyn_shmem_bytes), stream, nullptr, extra);
  if (rc != hipSuccess) {
    ThrowHipError(rc, "launch of ROCm kernel '" + sig_.name + "' on " + device.Describe() +
                          " with " + dims.Describe());
  }
}

}  // namespace rocm
}  // namespace tvm_runtime
