#include "cuda_launcher.h"

#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/kernel_image_module.h>
#include <tvm_runtime/backend/gpu/kernel_params.h>

#include <mutex>

#include "cuda_error.h"
#include "cuda_module.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

namespace {

using backend::LaunchDims;

// Clusters of more than 8 blocks are "non-portable" and must be enabled per function.
constexpr size_t kPortableClusterSize = 8;

}  // namespace

CudaLauncher::CudaLauncher(CudaModule* module, size_t index, const backend::FunctionInfo& info)
    : module_(module), index_(index), sig_(info) {
  by_pointer_.assign(info.arg_types.size(), false);
  for (size_t i = 0; i < info.arg_extra_tags.size(); ++i) {
    by_pointer_[i] =
        info.arg_extra_tags[i] == static_cast<int32_t>(backend::ArgExtraTag::kTensorMap);
  }
  needs_launch_ex_ = sig_.plan.uses_cluster() || sig_.plan.cooperative_launch() ||
                     sig_.plan.programmatic_dependent_launch();
}

CUfunction CudaLauncher::Function(const LoadedImage& image) const {
  CUfunction f = image.functions[index_];
  if (f == nullptr) {
    backend::ThrowKernelNotInImage(sig_.name, "CUDA device " + std::to_string(image.device_id));
  }
  return f;
}

void CudaLauncher::AllowDynSmem(const LoadedImage& image, CUfunction f, size_t bytes) const {
  std::atomic<uint32_t>& limit = image.dyn_smem_limit[index_];
  if (bytes <= limit.load(std::memory_order_acquire)) return;
  // More than 48 KiB of dynamic shared memory must be opted into per function (and device).
  // The attribute is the function's, shared by every thread launching it: only ever raise it,
  // and under a lock, so that a thread asking for less cannot lower it between another thread's
  // raise and that thread's launch (a launch then refused for too much shared memory).
  static std::mutex raise_mu;
  std::lock_guard<std::mutex> lock(raise_mu);
  if (bytes <= limit.load(std::memory_order_relaxed)) return;
  CheckCu(image.api->FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES=" + std::to_string(bytes) +
              ") for kernel '" + sig_.name + "'");
  limit.store(static_cast<uint32_t>(bytes), std::memory_order_release);
}

void CudaLauncher::operator()(const TVMFFIAny* args, int32_t num_args) const {
  sig_.CheckArity(num_args);
  const int32_t device_id = backend::CurrentDevice<kDeviceTypeCUDA>();
  CudaRuntime& rt = CudaRuntime::Global();
  CudaDevice& device = rt.Device(device_id);
  LoadedImage& image = *module_->GetImage(device_id);
  CUfunction f = Function(image);
  rt.MakeCurrent(device);

  backend::KernelParamPointers params(sig_.args, args, &by_pointer_);
  const LaunchDims dims = sig_.plan.Extract(args);
  if (dims.dyn_shmem_bytes > kDefaultDynSmemLimit) AllowDynSmem(image, f, dims.dyn_shmem_bytes);
  auto stream = static_cast<CUstream>(TVMFFIEnvGetStream(kDeviceTypeCUDA, device_id));

  CUresult rc;
  if (needs_launch_ex_) {
    rc = LaunchEx(f, dims, stream, params.data());
  } else {
    rc = image.api->LaunchKernel(
        f, static_cast<unsigned>(dims.grid(0)), static_cast<unsigned>(dims.grid(1)),
        static_cast<unsigned>(dims.grid(2)), static_cast<unsigned>(dims.block(0)),
        static_cast<unsigned>(dims.block(1)), static_cast<unsigned>(dims.block(2)),
        static_cast<unsigned>(dims.dyn_shmem_bytes), stream, params.data(), nullptr);
  }
  if (rc != CUDA_SUCCESS) ThrowLaunchError(rc, image, dims);
}

CUresult CudaLauncher::LaunchEx(CUfunction f, const LaunchDims& dims, CUstream stream,
                                void** params) const {
  const CuApi& api = CudaRuntime::Global().api();
  if (api.LaunchKernelEx == nullptr) {
    backend::ThrowError("RuntimeError",
                        "kernel '" + sig_.name +
                            "' uses thread-block clusters, cooperative or programmatic dependent "
                            "launch, which need cuLaunchKernelEx: upgrade the NVIDIA driver to "
                            "one supporting CUDA 12.0 or newer");
  }
  CUlaunchAttribute attrs[4] = {};
  unsigned int num_attrs = 0;
  size_t cluster = dims.cluster(0) * dims.cluster(1) * dims.cluster(2);
  if (cluster > 1) {
    if (cluster > kPortableClusterSize) {
      CheckCu(api.FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
              "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)");
    }
    CUlaunchAttribute& a = attrs[num_attrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.cluster_dim = {static_cast<unsigned>(dims.cluster(0)),
                           static_cast<unsigned>(dims.cluster(1)),
                           static_cast<unsigned>(dims.cluster(2))};
  }
  size_t preferred =
      dims.preferred_cluster(0) * dims.preferred_cluster(1) * dims.preferred_cluster(2);
  if (preferred > 1) {
    CUlaunchAttribute& a = attrs[num_attrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
    a.value.cluster_dim = {static_cast<unsigned>(dims.preferred_cluster(0)),
                           static_cast<unsigned>(dims.preferred_cluster(1)),
                           static_cast<unsigned>(dims.preferred_cluster(2))};
  }
  if (sig_.plan.programmatic_dependent_launch()) {
    CUlaunchAttribute& a = attrs[num_attrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmatic_stream_serialization_allowed = 1;
  }
  if (sig_.plan.cooperative_launch()) {
    CUlaunchAttribute& a = attrs[num_attrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value.cooperative = 1;
  }
  CUlaunchConfig config{};
  config.grid_x = static_cast<unsigned>(dims.grid(0));
  config.grid_y = static_cast<unsigned>(dims.grid(1));
  config.grid_z = static_cast<unsigned>(dims.grid(2));
  config.block_x = static_cast<unsigned>(dims.block(0));
  config.block_y = static_cast<unsigned>(dims.block(1));
  config.block_z = static_cast<unsigned>(dims.block(2));
  config.shared_mem_bytes = static_cast<unsigned>(dims.dyn_shmem_bytes);
  config.stream = stream;
  config.attrs = num_attrs != 0 ? attrs : nullptr;
  config.num_attrs = num_attrs;
  return api.LaunchKernelEx(&config, f, params, nullptr);
}

void CudaLauncher::ThrowLaunchError(CUresult rc, const LoadedImage& image,
                                    const LaunchDims& dims) const {
  CudaDevice& d = CudaRuntime::Global().Device(image.device_id);
  ThrowCuError(rc, "launch of CUDA kernel '" + sig_.name + "' on CUDA device " +
                       std::to_string(d.id) + " (" + d.name + ") with " + dims.Describe());
}

}  // namespace cuda
}  // namespace tvm_runtime
