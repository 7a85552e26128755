/*
 * One Metal kernel of a module: its MSL source (or metallib), the compute pipeline built lazily
 * per device, and the launch path host code reaches through the packed call.
 */
#ifndef TVM_RUNTIME_BACKENDS_METAL_METAL_KERNEL_H_
#define TVM_RUNTIME_BACKENDS_METAL_METAL_KERNEL_H_

#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/per_device_cache.h>

#include <memory>
#include <string>
#include <vector>

#include "metal_runtime.h"
#include "objc_api.h"

namespace tvm_runtime {
namespace metal {

/* The compute pipeline of one kernel on one device. */
struct BuiltPipeline {
  id pipeline = nullptr;       // owned
  NSUInteger max_threads = 0;  // maxTotalThreadsPerThreadgroup of this pipeline
  ~BuiltPipeline();
};

/* Code and per-device pipeline cache of one kernel; owned by its module. */
class MetalKernel {
 public:
  /* `code` is MSL source, or a metallib when `is_metallib`. */
  MetalKernel(std::string name, std::string code, bool is_metallib)
      : name_(std::move(name)), code_(std::move(code)), is_metallib_(is_metallib) {}

  const std::string& name() const { return name_; }

  /* Compiles on first use per device; throws RuntimeError with Metal's message on failure. */
  BuiltPipeline* Get(int32_t device_id, const MetalDevice& device) {
    return built_.Get(device_id, [&] { return Build(device); });
  }

 private:
  std::unique_ptr<BuiltPipeline> Build(const MetalDevice& device) const;
  id NewLibrary(const MetalDevice& device) const;

  std::string name_;
  std::string code_;
  bool is_metallib_;
  backend::PerDeviceCache<BuiltPipeline> built_;
};

/* The callable behind `mod[kernel_name]`.  apache-tvm 0.27's Metal codegen binds the buffer
 * parameters at [[buffer(0..B-1)]] in parameter order and packs the scalars, 8 bytes each in
 * parameter order, into one struct at [[buffer(B)]]. */
class MetalLauncher {
 public:
  MetalLauncher(MetalKernel* kernel, const backend::FunctionInfo& info);
  void operator()(const TVMFFIAny* args, int32_t num_args) const;

 private:
  [[noreturn]] void ThrowTooManyThreads(const backend::LaunchDims& dims, size_t threads,
                                        const BuiltPipeline& built,
                                        const MetalDevice& device) const;

  MetalKernel* kernel_;
  backend::KernelSignature sig_;
  std::vector<uint32_t> slot_;  // per parameter: its buffer index, or its 8-byte scalar slot
  uint32_t num_buffers_ = 0;
  uint32_t num_scalars_ = 0;
};

}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_METAL_KERNEL_H_
