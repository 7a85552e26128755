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
#include <tvm_runtime/backend/device_module.h>
#include <tvm_runtime/backend/per_device_cache.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_api.h"
#include "nvrtc_compiler.h"

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

class CudaModule final : public backend::DeviceModuleBase {
 public:
  CudaModule(std::string payload, backend::DeviceModuleHeader header, std::string code);

  ::tvm::ffi::String InspectSource(const ::tvm::ffi::String& format) const final;

  /* The image on `device_id`, loaded (and compiled) on first use. Hot path. */
  LoadedImage* Image(int32_t device_id) {
    LoadedImage* image = images_.Peek(device_id);
    return image != nullptr ? image : LoadImage(device_id);
  }

  const std::string& fmt() const { return header().fmt; }
  const std::string& kernel_name(size_t index) const { return kernel_names_[index]; }

 protected:
  ::tvm::ffi::Function MakeKernelFunction(const std::string& name,
                                          const backend::FunctionInfo& info) final;

 private:
  LoadedImage* LoadImage(int32_t device_id);
  std::unique_ptr<LoadedImage> Load(int32_t device_id);
  std::shared_ptr<const CompiledSource> CompiledFor(int sm, int driver_major, bool use_cache);

  std::string code_;
  std::vector<std::string> kernel_names_;  // index -> name, in function-table order
  backend::PerDeviceCache<LoadedImage> images_;
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
