/*
 * One OpenCL kernel of a module: its source piece, the program/kernel objects built lazily per
 * device, and the launch path that host code reaches through the packed call.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_KERNEL_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_KERNEL_H_

#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/cache/cache_entry.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/per_device_cache.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cl_api.h"
#include "opencl_runtime.h"

namespace tvm_runtime {
namespace opencl {

/* Program and kernel object of one kernel on one device. */
struct BuiltKernel {
  const ClApi* cl = nullptr;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  // clSetKernelArg mutates the kernel object: arguments and the enqueue that captures them
  // must not interleave between threads.  Uncontended, this costs one atomic pair per launch.
  std::mutex launch_mu;
  // Set when the program was built from source with the persistent cache on: the first launch
  // waits for completion and then stores the binary under this key (opencl_program_cache.h).
  // Guarded by launch_mu.
  std::unique_ptr<backend::CacheKey> store_after_launch;

  ~BuiltKernel();
};

/* Source and per-device build cache of one kernel; owned by its module. */
class OpenCLKernel {
 public:
  OpenCLKernel(std::string name, std::string source)
      : name_(std::move(name)), source_(std::move(source)) {}

  const std::string& name() const { return name_; }

  /* Builds on first use per device (from the persistent cache when it holds the program);
   * throws RuntimeError with the build log on failure. */
  BuiltKernel* Get(int32_t device_id, const ClDevice& device) {
    return built_.Get(device_id, [&] { return Build(device); });
  }

  /* Uses `binary` for `device_id` unless a program is already built there
   * (opencl.SetPreCompiledPrograms); throws RuntimeError when the driver rejects it. */
  void Preload(int32_t device_id, const ClDevice& device, const std::string& binary) {
    built_.Get(device_id, [&] { return BuildFromBinary(device, binary); });
  }

 private:
  std::unique_ptr<BuiltKernel> Build(const ClDevice& device) const;
  std::unique_ptr<BuiltKernel> BuildFromBinary(const ClDevice& device,
                                               const std::string& binary) const;
  void BuildFromSource(const ClDevice& device, BuiltKernel* built) const;
  void CreateKernel(BuiltKernel* built) const;

  std::string name_;
  std::string source_;
  backend::PerDeviceCache<BuiltKernel> built_;
};

/* The callable behind `mod[kernel_name]`: converts packed args and enqueues the kernel on the
 * current device's queue (or the stream set for it in the tvm-ffi stream context). */
class OpenCLLauncher {
 public:
  OpenCLLauncher(OpenCLKernel* kernel, const backend::FunctionInfo& info);
  void operator()(const TVMFFIAny* args, int32_t num_args) const;

 private:
  /* Waits for the first launch of a program built from source, then caches its binary. */
  void StoreAfterFirstLaunch(BuiltKernel* built, cl_command_queue queue) const;
  [[noreturn]] void ThrowLaunchError(cl_int err, const char* what, const ClDevice& device,
                                     const size_t* global, const size_t* local,
                                     size_t work_dim) const;

  OpenCLKernel* kernel_;
  backend::KernelSignature sig_;
  std::vector<uint32_t> arg_sizes_;  // clSetKernelArg sizes, per parameter
};

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_KERNEL_H_
