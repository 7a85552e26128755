#include "metal_kernel.h"

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/scratch_array.h>

#include <cstring>

#include "metal_messages.h"

namespace tvm_runtime {
namespace metal {

namespace {

using backend::ArgKind;
using backend::ArgValue;

// Compiler logs can hold hundreds of errors; keep the exception message readable.
constexpr size_t kMaxLog = 16384;
// Scalars travel in 8-byte slots (the codegen's `union __TVMArgUnion` fields are 8 bytes).
constexpr size_t kScalarSlot = 8;

std::string Truncated(std::string log) {
  if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n... (log truncated)";
  return log;
}

std::string Dims(const backend::LaunchDims& d, int first) {
  return "(" + std::to_string(d.work[first]) + ", " + std::to_string(d.work[first + 1]) + ", " +
         std::to_string(d.work[first + 2]) + ")";
}

}  // namespace

BuiltPipeline::~BuiltPipeline() { msg::Release(pipeline); }

id MetalKernel::NewLibrary(const MetalDevice& device) const {
  const ObjcApi& api = MetalRuntime::Global().api();
  id error = nullptr;
  if (is_metallib_) {
    // DISPATCH_DATA_DESTRUCTOR_DEFAULT (NULL): libdispatch copies the bytes.
    id data = api.DispatchDataCreate(code_.data(), code_.size(), nullptr, nullptr);
    id library = msg::NewLibraryWithData(device.device, data, &error);
    if (api.DispatchRelease != nullptr && data != nullptr) api.DispatchRelease(data);
    if (library == nullptr) {
      backend::ThrowError(
          "RuntimeError",
          "Metal cannot load the metallib of kernel '" + name_ + "' on device '" + device.name +
              "': " + msg::LocalizedDescription(error, "(no error description)") +
              ". A metallib only loads on the macOS and GPU family it was built for: rebuild "
              "the model on this Mac's toolchain, or export MSL source (the default of "
              "target 'metal'), which is compiled here at first use.");
    }
    return library;
  }
  id options = msg::Init(msg::Alloc(msg::Class("MTLCompileOptions")));
  if (options == nullptr) {
    backend::ThrowError("RuntimeError", "Metal.framework has no MTLCompileOptions class");
  }
  msg::SetLanguageVersion(options, device.language_version);
  msg::SetFastMathEnabled(options, true);  // what apache-tvm's Metal runtime compiles with
  id source = msg::StringWithUTF8String(code_.c_str());
  id library = msg::NewLibraryWithSource(device.device, source, options, &error);
  msg::Release(options);
  if (library == nullptr) {
    backend::ThrowError(
        "RuntimeError",
        "Metal could not compile kernel '" + name_ + "' for device '" + device.name + "' (MSL " +
            device.LanguageVersionText() +
            ", fast math). If the log names a feature this GPU lacks (simdgroup operations, "
            "bfloat, ...), compile the model for a target without it; otherwise the artifact is "
            "damaged: re-export it.\nMetal compiler log:\n" +
            Truncated(msg::LocalizedDescription(error, "(Metal returned no log)")));
  }
  // A library with warnings also sets `error`; it is autoreleased, nothing to do.
  return library;
}

std::unique_ptr<BuiltPipeline> MetalKernel::Build(const MetalDevice& device) const {
  const ObjcApi& api = MetalRuntime::Global().api();
  AutoreleasePool pool(api);
  id library = NewLibrary(device);
  id function = msg::NewFunctionWithName(library, msg::StringWithUTF8String(name_.c_str()));
  msg::Release(library);  // the function keeps what it needs
  if (function == nullptr) {
    backend::ThrowError("RuntimeError", "the Metal library of kernel '" + name_ +
                                            "' has no kernel function named '" + name_ +
                                            "': the artifact is damaged; re-export it");
  }
  id error = nullptr;
  id pipeline = msg::NewComputePipelineStateWithFunction(device.device, function, &error);
  msg::Release(function);
  if (pipeline == nullptr) {
    backend::ThrowError("RuntimeError",
                        "Metal could not create the compute pipeline of kernel '" + name_ +
                            "' on device '" + device.name +
                            "': " + msg::LocalizedDescription(error, "(no error description)"));
  }
  auto built = std::make_unique<BuiltPipeline>();
  built->pipeline = pipeline;
  built->max_threads = msg::MaxTotalThreadsPerThreadgroup(pipeline);
  return built;
}

MetalLauncher::MetalLauncher(MetalKernel* kernel, const backend::FunctionInfo& info)
    : kernel_(kernel), sig_(info) {
  if (sig_.plan.uses_dyn_shmem() || sig_.plan.uses_cluster()) {
    backend::ThrowError("ValueError", "kernel '" + kernel->name() +
                                          "' asks for dynamic shared memory or thread-block "
                                          "clusters, which apache-tvm's Metal code does not use: "
                                          "the artifact is damaged; re-export it");
  }
  for (size_t i = 0; i < sig_.args.size(); ++i) {
    slot_.push_back(sig_.args.kind(i) == ArgKind::kHandle ? num_buffers_++ : num_scalars_++);
  }
}

void MetalLauncher::operator()(const TVMFFIAny* args, int32_t num_args) const {
  sig_.CheckArity(num_args);
  const int32_t device_id = backend::CurrentDevice<kDeviceTypeMetal>();
  MetalRuntime& rt = MetalRuntime::Global();
  const MetalDevice& device = rt.Device(device_id);
  BuiltPipeline* built = kernel_->Get(device_id, device);

  const size_t n = sig_.args.size();
  backend::ScratchArray<ArgValue> values(n);
  sig_.args.Convert(args, values.data());
  backend::ScratchArray<uint64_t> scalars(num_scalars_ == 0 ? 1 : num_scalars_);
  std::memset(scalars.data(), 0, num_scalars_ * kScalarSlot);
  for (size_t i = 0; i < n; ++i) {
    ArgKind kind = sig_.args.kind(i);
    if (kind == ArgKind::kHandle) continue;
    // 32-bit values sit in the low half of their slot (little-endian), as the codegen reads them.
    std::memcpy(&scalars[slot_[i]], &values[i], backend::ArgSize(kind));
  }

  const backend::LaunchDims dims = sig_.plan.Extract(args);
  const MTLSize grid{dims.grid(0), dims.grid(1), dims.grid(2)};
  const MTLSize block{dims.block(0), dims.block(1), dims.block(2)};
  const size_t threads = block.width * block.height * block.depth;
  if (threads > built->max_threads) ThrowTooManyThreads(dims, threads, *built, device);

  rt.CurrentStream(device_id)->Compute(kernel_->name().c_str(), [&](id encoder) {
    msg::SetComputePipelineState(encoder, built->pipeline);
    for (size_t i = 0; i < n; ++i) {
      if (sig_.args.kind(i) == ArgKind::kHandle) {
        msg::SetBuffer(encoder, values[i].v_handle, 0, slot_[i]);
      }
    }
    if (num_scalars_ != 0) {
      msg::SetBytes(encoder, scalars.data(), num_scalars_ * kScalarSlot, num_buffers_);
    }
    msg::DispatchThreadgroups(encoder, grid, block);
  });
}

void MetalLauncher::ThrowTooManyThreads(const backend::LaunchDims& dims, size_t threads,
                                        const BuiltPipeline& built,
                                        const MetalDevice& device) const {
  backend::ThrowError(
      "ValueError",
      "kernel '" + kernel_->name() + "' is launched with threadgroups of " + Dims(dims, 3) + " = " +
          std::to_string(threads) + " threads, but its pipeline on '" + device.name +
          "' allows at most " + std::to_string(built.max_threads) +
          ": compile the model with max_threads_per_block = " + std::to_string(built.max_threads) +
          " (tvm.target.Target from "
          "tvm.backend.metal.detect_target(dev))");
}

}  // namespace metal
}  // namespace tvm_runtime
