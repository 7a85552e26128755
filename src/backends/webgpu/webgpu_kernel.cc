#include "webgpu_kernel.h"

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/kernel_args.h>
#include <tvm_runtime/backend/gpu/scratch_array.h>
#include <tvm_runtime/backend/message_text.h>

#include <cstring>
#include <memory>
#include <utility>

#include "webgpu_runtime.h"

namespace tvm_runtime {
namespace webgpu {

namespace {

using backend::ArgKind;
using backend::Printable;
using backend::ThrowError;

[[noreturn]] void BadTag(const std::string& kernel, const std::string& tag) {
  ThrowError("ValueError", "kernel '" + Printable(kernel) + "' has a malformed launch tag '" +
                               Printable(tag) +
                               "' (expected paramWriteAccess:[0,1,...], one 0/1 per buffer)");
}

std::vector<bool> ParseWriteAccess(const std::string& kernel, const std::string& tag) {
  std::string list = tag.substr(std::strlen(kParamWriteAccessTag));
  if (list.size() < 2 || list.front() != '[' || list.back() != ']') BadTag(kernel, tag);
  std::vector<bool> out;
  std::string body = list.substr(1, list.size() - 2);
  size_t pos = 0;
  while (pos < body.size()) {
    size_t comma = body.find(',', pos);
    std::string item =
        body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item == "0") {
      out.push_back(false);
    } else if (item == "1") {
      out.push_back(true);
    } else {
      BadTag(kernel, tag);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

backend::FunctionInfo StripWriteAccessTag(const backend::FunctionInfo& info,
                                          std::vector<bool>* writes) {
  backend::FunctionInfo out = info;
  out.launch_param_tags.clear();
  bool found = false;
  for (const std::string& tag : info.launch_param_tags) {
    if (tag.rfind(kParamWriteAccessTag, 0) == 0) {
      *writes = ParseWriteAccess(info.name, tag);
      found = true;
    } else {
      out.launch_param_tags.push_back(tag);
    }
  }
  if (!found) {
    ThrowError("ValueError", "kernel '" + Printable(info.name) +
                                 "' has no paramWriteAccess launch tag; the artifact was not "
                                 "written by apache-tvm 0.27's WebGPU codegen");
  }
  return out;
}

void FoldGrid(const std::string& kernel, uint64_t grid_x, uint64_t grid_y, uint64_t grid_z,
              uint32_t max_per_dim, uint32_t out[3]) {
  if (grid_z != 1) {
    ThrowError("ValueError", "kernel '" + kernel +
                                 "' launches with blockIdx.z, which WebGPU artifacts reserve for "
                                 "wide grids");
  }
  uint64_t z = (grid_x + max_per_dim - 1) / max_per_dim;
  uint64_t x = (grid_x + z - 1) / z;
  if (grid_y > max_per_dim || z > max_per_dim) {
    ThrowError("ValueError", "kernel '" + kernel + "': grid " + std::to_string(grid_x) + " x " +
                                 std::to_string(grid_y) + " exceeds the device's " +
                                 std::to_string(max_per_dim) + " workgroups per dimension");
  }
  out[0] = static_cast<uint32_t>(x);
  out[1] = static_cast<uint32_t>(grid_y);
  out[2] = static_cast<uint32_t>(z);
}

WebGPUKernel::WebGPUKernel(std::string name, std::string wgsl, const backend::FunctionInfo& info)
    : name_(std::move(name)), wgsl_(std::move(wgsl)), sig_(StripWriteAccessTag(info, &writes_)) {
  for (size_t i = 0; i < sig_.args.size(); ++i) {
    switch (sig_.args.kind(i)) {
      case ArgKind::kHandle:
        buffer_args_.push_back(i);
        break;
      case ArgKind::kInt32:
      case ArgKind::kUInt32:
      case ArgKind::kFloat32:
        pod_args_.push_back(i);
        break;
      default:
        ThrowError("TypeError", "kernel '" + name_ + "' argument " + std::to_string(i) +
                                    " is a 64-bit scalar; WebGPU kernels take 32-bit scalars");
    }
  }
  if (writes_.size() != buffer_args_.size()) {
    ThrowError("ValueError", "kernel '" + Printable(name_) + "' has " +
                                 std::to_string(buffer_args_.size()) +
                                 " buffer arguments but its paramWriteAccess tag lists " +
                                 std::to_string(writes_.size()));
  }
  needs_f16_ = wgsl_.find("enable f16;") != std::string::npos;
}

WebGPUKernel::~WebGPUKernel() = default;

WebGPUKernel::DevicePipeline::~DevicePipeline() {
  WebGPURuntime& rt = WebGPURuntime::Global();
  if (rt.shut_down()) return;
  if (pipeline.pipeline != nullptr) rt.fn().wgpuComputePipelineRelease(pipeline.pipeline);
  if (pipeline.layout != nullptr) rt.fn().wgpuBindGroupLayoutRelease(pipeline.layout);
}

const WebGPUPipeline& WebGPUKernel::PipelineFor(int32_t device_id, WebGPUDevice* device) {
  DevicePipeline* p = pipelines_.Get(device_id, [&] {
    if (needs_f16_ && !device->shader_f16()) {
      ThrowError("RuntimeError",
                 "kernel '" + name_ + "' uses float16 (WGSL `enable f16;`), but WebGPU adapter '" +
                     device->adapter().name + "' (" + device->adapter().BackendName() +
                     ") does not provide the 'shader-f16' feature" +
                     (device->adapter().shader_f16
                          ? std::string(" (disabled by ") + kDisableFeaturesEnvVar + ")"
                          : std::string()) +
                     "; compile the model with float32 for this device");
    }
    auto made = std::make_unique<DevicePipeline>();
    made->pipeline = device->CreatePipeline(name_, wgsl_, writes_);
    return made;
  });
  return p->pipeline;
}

void WebGPUKernel::Launch(const TVMFFIAny* args, int32_t num_args) {
  sig_.CheckArity(num_args);
  int32_t device_id = backend::CurrentDevice<kDeviceTypeWebGPU>();
  WebGPUDevice& device = WebGPURuntime::Global().Device(device_id);
  const WebGPUPipeline& pipeline = PipelineFor(device_id, &device);

  backend::LaunchDims dims = sig_.plan.Extract(args);
  uint32_t grid[3];
  FoldGrid(name_, dims.grid(0), dims.grid(1), dims.grid(2),
           device.limits().maxComputeWorkgroupsPerDimension, grid);

  backend::ScratchArray<WebGPUBuffer*, 16> buffers(buffer_args_.size());
  for (size_t i = 0; i < buffer_args_.size(); ++i) {
    buffers[i] = static_cast<WebGPUBuffer*>(backend::ArgHandle(args[buffer_args_[i]]));
  }
  // The uniform struct: one 32-bit word per scalar, then packGridDimX = the last valid
  // linearized block index (the kernel returns for indices above it).
  backend::ScratchArray<uint32_t, 16> pod(pod_args_.size() + 1);
  for (size_t i = 0; i < pod_args_.size(); ++i) {
    const TVMFFIAny& a = args[pod_args_[i]];
    switch (sig_.args.kind(pod_args_[i])) {
      case ArgKind::kFloat32: {
        float v = static_cast<float>(backend::ArgFloat(a));
        std::memcpy(&pod[i], &v, 4);
        break;
      }
      default: {
        int32_t v = static_cast<int32_t>(backend::ArgInt(a));
        std::memcpy(&pod[i], &v, 4);
        break;
      }
    }
  }
  pod[pod_args_.size()] = static_cast<uint32_t>(dims.grid(0) - 1);
  std::vector<WebGPUBuffer*> snapshots = SnapshotAliasedInputs(&device, buffers.data());
  // Released once recorded (or on failure): wgpu-native keeps a buffer alive until the commands
  // using it have run.
  struct Release {
    WebGPUDevice* device;
    std::vector<WebGPUBuffer*>* buffers;
    ~Release() {
      for (WebGPUBuffer* b : *buffers) device->Free(b);
    }
  } release{&device, &snapshots};
  device.Dispatch(name_, pipeline, buffers.data(), buffer_args_.size(), pod.data(),
                  (pod_args_.size() + 1) * sizeof(uint32_t), grid);
}

std::vector<WebGPUBuffer*> WebGPUKernel::SnapshotAliasedInputs(WebGPUDevice* device,
                                                               WebGPUBuffer** buffers) const {
  // WebGPU forbids one buffer bound both read-only and read-write in a dispatch (wgpu-native
  // aborts the process on it at submit).  apache-tvm's storage rewrite makes exactly that for
  // in-place element-wise steps: the same workspace is the input and the output of a kernel.
  // Such an input gets a copy of the buffer made just before the dispatch, which is what the
  // kernel reads anyway: every element is read before it is written.
  std::vector<WebGPUBuffer*> snapshots;
  const size_t n = buffer_args_.size();
  try {
    for (size_t i = 0; i < n; ++i) {
      if (writes_[i]) continue;
      bool aliased = false;
      for (size_t j = 0; j < n && !aliased; ++j) aliased = writes_[j] && buffers[j] == buffers[i];
      if (!aliased) continue;
      WebGPUBuffer* original = buffers[i];
      WebGPUBuffer* copy = device->Allocate(original->size);
      snapshots.push_back(copy);
      device->CopyOnDevice(original, 0, copy, 0, original->size);
      for (size_t k = i; k < n; ++k) {
        if (!writes_[k] && buffers[k] == original) buffers[k] = copy;
      }
    }
  } catch (...) {
    for (WebGPUBuffer* b : snapshots) device->Free(b);
    throw;
  }
  return snapshots;
}

}  // namespace webgpu
}  // namespace tvm_runtime
