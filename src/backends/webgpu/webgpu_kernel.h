/*
 * One WGSL kernel of an apache-tvm 0.27 `webgpu` module and how TVM host code launches it.
 *
 * What 0.27's WebGPU codegen emits, which this file follows: the kernel's buffers are storage
 * buffers at @group(0) @binding(0..n-1), in argument order, `read` or `read_write` as the
 * `paramWriteAccess:[...]` launch tag lists them; its scalar (POD) arguments, each a 32-bit
 * i32/u32/f32, then one u32 `packGridDimX`, form a uniform struct at binding n.  blockIdx.z is
 * reserved: a grid wider than the device's per-dimension limit is folded into x*z workgroups,
 * the kernel recomputes blockIdx.x as blockIdx.z * gridDim.x + blockIdx.x and returns when that
 * exceeds packGridDimX.  Threads per workgroup are fixed in the WGSL (@workgroup_size), so the
 * threadIdx launch values are not needed at dispatch.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_KERNEL_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_KERNEL_H_

#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/function_info.h>
#include <tvm_runtime/backend/gpu/per_device_cache.h>

#include <string>
#include <vector>

#include "webgpu_device.h"

namespace tvm_runtime {
namespace webgpu {

/* The launch tag 0.27's WebGPU codegen adds after the thread tags. */
constexpr const char* kParamWriteAccessTag = "paramWriteAccess:";

/* Splits `info.launch_param_tags` into the thread tags and the parsed write-access list; throws
 * ValueError when the tag is missing or malformed. */
backend::FunctionInfo StripWriteAccessTag(const backend::FunctionInfo& info,
                                          std::vector<bool>* writes);

/* Workgroup counts for a `grid_x` x `grid_y` launch on a device allowing `max_per_dim` per
 * dimension: x folded into z when needed.  Throws ValueError when it cannot fit. */
void FoldGrid(const std::string& kernel, uint64_t grid_x, uint64_t grid_y, uint64_t grid_z,
              uint32_t max_per_dim, uint32_t out[3]);

class WebGPUKernel {
 public:
  WebGPUKernel(std::string name, std::string wgsl, const backend::FunctionInfo& info);
  ~WebGPUKernel();

  void Launch(const TVMFFIAny* args, int32_t num_args);

 private:
  /* Replaces each read-only binding of a buffer that is also bound read-write by a fresh copy
   * of it; returns the copies, for the caller to free once the dispatch is recorded. */
  std::vector<WebGPUBuffer*> SnapshotAliasedInputs(WebGPUDevice* device,
                                                   WebGPUBuffer** buffers) const;
  struct DevicePipeline {
    WebGPUPipeline pipeline;
    ~DevicePipeline();
  };
  const WebGPUPipeline& PipelineFor(int32_t device_id, WebGPUDevice* device);

  std::string name_;
  std::string wgsl_;
  bool needs_f16_ = false;
  std::vector<bool> writes_;
  backend::KernelSignature sig_;
  std::vector<size_t> buffer_args_;  // indices of buffer arguments, in binding order
  std::vector<size_t> pod_args_;     // indices of scalar arguments, in struct order
  backend::PerDeviceCache<DevicePipeline, kMaxDevices> pipelines_;
};

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_KERNEL_H_
