/*
 * Device module of kind "cuda" (apache-tvm 0.27 payload: `str fmt; map<str, FunctionInfo> fmap;
 * bytes code`, fmt one of "cubin", "ptx", "fatbin" or "cuda" = CUDA C++ source) and its loader
 * `ffi.Module.load_from_bytes.cuda`.
 *
 * Loading only parses: the driver is first touched when a kernel runs on a device.  Then, once
 * per device, the image is made (compiled with NVRTC for the device's architecture when the
 * artifact holds source; once per architecture) and loaded with cuModuleLoadDataEx, and every
 * kernel's CUfunction is looked up.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_MODULE_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_MODULE_H_

#include <tvm/ffi/container/map.h>
#include <tvm/ffi/extra/module.h>
#include <tvm_runtime/backend/gpu/kernel_image_module.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_api.h"
#include "nvrtc/nvrtc_compiler.h"

namespace tvm_runtime {
namespace cuda {

/* Dynamic shared memory every kernel may use without opting in (cuFuncSetAttribute). */
constexpr uint32_t kDefaultDynSmemLimit = 48 * 1024;

/* A module image loaded into one device's primary context. */
struct LoadedImage {
  const CuApi* api = nullptr;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  int32_t device_id = 0;
  std::vector<CUfunction> functions;  // by kernel index; nullptr: not in the image
  // Dynamic shared memory each function is currently allowed beyond the 48 KiB default.
  std::unique_ptr<std::atomic<uint32_t>[]> dyn_smem_limit;

  ~LoadedImage();
};

class CudaModule final : public backend::KernelImageModule<LoadedImage> {
 public:
  CudaModule(std::string payload, backend::KernelImagePayload parsed);

  ::tvm::ffi::String InspectSource(const ::tvm::ffi::String& format) const final;

 protected:
  ::tvm::ffi::Function MakeKernelFunction(const std::string& name,
                                          const backend::FunctionInfo& info) final;
  LoadedImage* LoadImage(int32_t device_id) final;
  std::unique_ptr<LoadedImage> Load(int32_t device_id) final;

 private:
  std::shared_ptr<const CompiledSource> CompiledFor(int sm, int driver_major, bool use_cache);

  std::mutex compile_mu_;
  std::map<int, std::shared_ptr<const CompiledSource>> compiled_;  // by sm
};

/* Parses and validates a payload; nothing touches the driver until a kernel is first called. */
::tvm::ffi::Module LoadCudaModule(std::string payload);

/* The function table of a module made by LoadCudaModule, for diagnostics and tests:
 * {"fmt": str, "kernels": {name: {"arg_types": [dtype str], "launch_param_tags": [str],
 * "arg_extra_tags": [int]}}}.  TypeError for any other module. */
::tvm::ffi::Map<::tvm::ffi::String, ::tvm::ffi::Any> DescribeCudaModule(
    const ::tvm::ffi::Module& module);

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_MODULE_H_
