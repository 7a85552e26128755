#include "opencl_kernel.h"

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/scratch_array.h>

#include "cl_error.h"
#include "opencl_program_cache.h"
#include "opencl_timer.h"

namespace tvm_runtime {
namespace opencl {

namespace {

using backend::ArgKind;
using backend::ArgValue;

// Build logs can hold hundreds of errors; keep the exception message readable.
constexpr size_t kMaxBuildLog = 16384;
// clSetKernelArg takes a pointer to the cl_mem; NULL buffers point here.
const cl_mem kNullMem = nullptr;
// What clBuildProgram gets, from source or binary (apache-tvm 0.27 passes no options either).
constexpr const char* kBuildOptions = "";

std::string BuildLog(const ClApi& cl, cl_program program, cl_device_id device) {
  size_t size = 0;
  if (cl.GetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return "(the driver returned no build log)";
  }
  std::string log(size, '\0');
  if (cl.GetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr) !=
      CL_SUCCESS) {
    return "(the driver returned no build log)";
  }
  size_t end = log.find_last_not_of(std::string(" \t\r\n\0", 5));
  log.resize(end == std::string::npos ? 0 : end + 1);
  if (log.size() > kMaxBuildLog) {
    log = log.substr(0, kMaxBuildLog) + "\n... (build log truncated)";
  }
  return log;
}

std::string Dims(const size_t* v, size_t n) {
  std::string out = "(";
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + ")";
}

}  // namespace

BuiltKernel::~BuiltKernel() {
  if (kernel != nullptr) cl->ReleaseKernel(kernel);
  if (program != nullptr) cl->ReleaseProgram(program);
}

std::unique_ptr<BuiltKernel> OpenCLKernel::Build(const ClDevice& device) const {
  auto built = std::make_unique<BuiltKernel>();
  built->cl = &OpenCLRuntime::Global().api();
  const ClApi& cl = *built->cl;
  backend::PersistentCache cache = ProgramCache();
  if (cache.enabled() && HasBinaryApi(cl)) {
    backend::CacheKey key = ProgramCacheKey(device, source_, kBuildOptions);
    std::string binary;
    if (cache.Load(key, &binary)) {
      std::string error;
      built->program = BuildProgramFromBinary(cl, device, binary, kBuildOptions, &error);
      // A sound entry the driver still refuses (e.g. its format changed under an unchanged
      // version string): build from source, which stores a fresh one.
      if (built->program == nullptr) cache.Rejected(key, error);
    }
    if (built->program == nullptr)
      built->store_after_launch = std::make_unique<backend::CacheKey>(key);
  }
  if (built->program == nullptr) BuildFromSource(device, built.get());
  CreateKernel(built.get());
  return built;
}

std::unique_ptr<BuiltKernel> OpenCLKernel::BuildFromBinary(const ClDevice& device,
                                                           const std::string& binary) const {
  auto built = std::make_unique<BuiltKernel>();
  built->cl = &OpenCLRuntime::Global().api();
  std::string error = "this OpenCL driver cannot load program binaries";
  if (HasBinaryApi(*built->cl)) {
    built->program = BuildProgramFromBinary(*built->cl, device, binary, kBuildOptions, &error);
  }
  if (built->program == nullptr) {
    backend::ThrowError("RuntimeError",
                        "opencl.SetPreCompiledPrograms: the binary of kernel '" + name_ +
                            "' does not load on device '" + device.name + "' (" + error +
                            "). Pre-compiled programs only load on the device and driver "
                            "version that made them: get them again there with "
                            "opencl.GetPreCompiledPrograms.");
  }
  CreateKernel(built.get());
  return built;
}

void OpenCLKernel::BuildFromSource(const ClDevice& device, BuiltKernel* built) const {
  const ClApi& cl = *built->cl;
  const char* text = source_.c_str();
  size_t length = source_.size();
  cl_int err = CL_SUCCESS;
  built->program = cl.CreateProgramWithSource(device.context, 1, &text, &length, &err);
  if (err != CL_SUCCESS) {
    built->program = nullptr;
    ThrowClError(err, "clCreateProgramWithSource for kernel '" + name_ + "'");
  }
  err = cl.BuildProgram(built->program, 1, &device.id, kBuildOptions, nullptr, nullptr);
  if (err != CL_SUCCESS) {
    std::string hint;
    // TVM's OpenCL codegen enables cl_khr_fp16 in every kernel that uses half.
    if (source_.find("cl_khr_fp16") != std::string::npos && !device.HasExtension("cl_khr_fp16") &&
        !device.HasExtension("cl_amd_fp16")) {
      hint =
          " The kernel uses half precision, which this device does not support "
          "(no cl_khr_fp16): compile the model for float32, or run it on a device with fp16.";
    }
    backend::ThrowError("RuntimeError",
                        "OpenCL kernel '" + name_ + "' failed to build for device '" + device.name +
                            "' (clBuildProgram returned " + ClErrorString(err) + ")." + hint +
                            "\nBuild log:\n" + BuildLog(cl, built->program, device.id));
  }
}

void OpenCLKernel::CreateKernel(BuiltKernel* built) const {
  cl_int err = CL_SUCCESS;
  built->kernel = built->cl->CreateKernel(built->program, name_.c_str(), &err);
  if (err != CL_SUCCESS) {
    built->kernel = nullptr;
    ThrowClError(err, "clCreateKernel: the program of '" + name_ +
                          "' built, but does not define a __kernel of that name");
  }
}

OpenCLLauncher::OpenCLLauncher(OpenCLKernel* kernel, const backend::FunctionInfo& info)
    : kernel_(kernel), sig_(info) {
  for (size_t i = 0; i < sig_.args.size(); ++i) {
    ArgKind kind = sig_.args.kind(i);
    arg_sizes_.push_back(
        static_cast<uint32_t>(kind == ArgKind::kHandle ? sizeof(cl_mem) : backend::ArgSize(kind)));
  }
}

void OpenCLLauncher::operator()(const TVMFFIAny* args, int32_t num_args) const {
  sig_.CheckArity(num_args);
  const int32_t device_id = backend::CurrentDevice<kDeviceTypeOpenCL>();
  const ClDevice& device = OpenCLRuntime::Global().Device(device_id);
  BuiltKernel* built = kernel_->Get(device_id, device);

  const size_t n = sig_.args.size();
  backend::ScratchArray<ArgValue> values(n);
  sig_.args.Convert(args, values.data());

  const backend::LaunchDims dims = sig_.plan.Extract(args);
  const size_t work_dim = sig_.plan.work_dim();
  size_t global[3];
  size_t local[3];
  for (size_t i = 0; i < work_dim; ++i) {
    local[i] = dims.block(static_cast<int>(i));
    global[i] = dims.grid(static_cast<int>(i)) * local[i];
  }
  cl_command_queue queue = CurrentQueue(device_id, device);

  const ClApi& cl = *built->cl;
  std::lock_guard<std::mutex> lock(built->launch_mu);
  for (size_t i = 0; i < n; ++i) {
    // Buffers: `data` is the descriptor, whose first member is the cl_mem the kernel wants.
    const void* value = &values[i];
    if (sig_.args.kind(i) == ArgKind::kHandle) {
      value = values[i].v_handle != nullptr ? values[i].v_handle : &kNullMem;
    }
    cl_int err = cl.SetKernelArg(built->kernel, static_cast<cl_uint>(i), arg_sizes_[i], value);
    if (err != CL_SUCCESS) ThrowLaunchError(err, "clSetKernelArg", device, global, local, 0);
  }
  CommandEvent launched(queue);
  cl_int err = cl.EnqueueNDRangeKernel(queue, built->kernel, static_cast<cl_uint>(work_dim),
                                       nullptr, global, local, 0, nullptr, launched.slot());
  if (err != CL_SUCCESS) {
    ThrowLaunchError(err, "clEnqueueNDRangeKernel", device, global, local, work_dim);
  }
  launched.Done();
  if (built->store_after_launch) StoreAfterFirstLaunch(built, queue);
}

void OpenCLLauncher::StoreAfterFirstLaunch(BuiltKernel* built, cl_command_queue queue) const {
  // Once per kernel and process, and only after a compile from source, which took far longer
  // than this wait for the queue.
  const ClApi& cl = *built->cl;
  bool finished = cl.Finish(queue) == CL_SUCCESS;
  std::unique_ptr<backend::CacheKey> key = std::move(built->store_after_launch);
  if (!finished) return;
  std::string binary = ProgramBinary(cl, built->program);
  backend::PersistentCache cache = ProgramCache();
  if (binary.empty()) {
    cache.stats().Note("the OpenCL driver returned no binary for kernel '" + kernel_->name() + "'");
    return;
  }
  cache.Store(*key, binary);
}

void OpenCLLauncher::ThrowLaunchError(cl_int err, const char* what, const ClDevice& device,
                                      const size_t* global, const size_t* local,
                                      size_t work_dim) const {
  std::string where =
      std::string(what) + " of kernel '" + kernel_->name() + "' on device '" + device.name + "'";
  if (work_dim != 0) {
    where += " (global size " + Dims(global, work_dim) + ", local size " + Dims(local, work_dim) +
             ", device max work-group size " + std::to_string(device.max_work_group_size) + ")";
  }
  ThrowClError(err, where);
}

}  // namespace opencl
}  // namespace tvm_runtime
