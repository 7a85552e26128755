#include "cuda_module.h"

#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/function_info.h>

#include <cstdint>
#include <utility>

#include "cuda_error.h"
#include "cuda_launcher.h"
#include "cuda_runtime.h"
#include "nvrtc/nvrtc_library.h"

namespace tvm_runtime {
namespace cuda {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::Map;
using ::tvm::ffi::String;

constexpr size_t kJitLogSize = 8192;

bool IsBinaryFormat(const std::string& fmt) {
  return fmt == "cubin" || fmt == "ptx" || fmt == "fatbin";
}

[[noreturn]] void RejectFormat(const std::string& fmt) {
  backend::ThrowError("ValueError",
                      "unknown CUDA module format '" + fmt +
                          "' (expected 'cuda', 'ptx', 'cubin' or 'fatbin'); the artifact was not "
                          "written by apache-tvm 0.25-0.27 or is corrupted");
}

std::string DescribeWithArch(const CudaDevice& d) {
  return "CUDA device " + std::to_string(d.id) + " (" + d.name + ", sm_" + std::to_string(d.sm()) +
         ")";
}

/* cuModuleLoadDataEx with the JIT error log captured (PTX is JIT-compiled here). */
CUresult LoadData(const CuApi& api, const std::string& image, CUmodule* module, std::string* log) {
  char buffer[kJitLogSize] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {buffer, reinterpret_cast<void*>(static_cast<uintptr_t>(kJitLogSize - 1))};
  // std::string keeps a NUL after the data, as PTX text requires.
  CUresult rc = api.ModuleLoadDataEx(module, image.c_str(), 2, options, values);
  *log = buffer;
  return rc;
}

}  // namespace

LoadedImage::~LoadedImage() {
  if (module == nullptr) return;
  // Unloading needs the owning context; do not disturb the destroying thread's current one.
  ScopedContext scope(*api, context);
  api->ModuleUnload(module);  // failures only happen at driver shutdown; nothing to do then
}

CudaModule::CudaModule(std::string payload, backend::KernelImagePayload parsed)
    : KernelImageModule("cuda", std::move(payload), std::move(parsed)) {}

::tvm::ffi::String CudaModule::InspectSource(const ::tvm::ffi::String& format) const {
  // Binary images are not text; source and PTX are what a user wants to read.
  if (fmt() == "cuda" || fmt() == "ptx") return code();
  return String("");
}

::tvm::ffi::Function CudaModule::MakeKernelFunction(const std::string& name,
                                                    const backend::FunctionInfo& info) {
  return WrapLauncher(CudaLauncher(this, KernelIndex(name), info));
}

LoadedImage* CudaModule::LoadImage(int32_t device_id) {
  if (fmt() == "cuda") {
    // Finding NVRTC may call into Python; do it before taking the per-device lock.
    CudaRuntime& rt = CudaRuntime::Global();
    if (rt.Available()) GetNvrtc(rt.DriverVersion() / 1000);
  }
  return LoadOnce(device_id);
}

std::shared_ptr<const CompiledSource> CudaModule::CompiledFor(int sm, int driver_major,
                                                              bool use_cache) {
  std::lock_guard<std::mutex> lock(compile_mu_);
  auto it = compiled_.find(sm);
  if (it != compiled_.end() && use_cache) return it->second;
  auto compiled = std::make_shared<const CompiledSource>(
      CompileCudaSource(code(), DeviceArch(sm), driver_major, use_cache));
  compiled_[sm] = compiled;
  return compiled;
}

std::unique_ptr<LoadedImage> CudaModule::Load(int32_t device_id) {
  CudaRuntime& rt = CudaRuntime::Global();
  CudaDevice& dev = rt.Device(device_id);
  const CuApi& api = rt.api();
  auto loaded = std::make_unique<LoadedImage>();
  loaded->api = &api;
  loaded->context = rt.Context(dev);
  loaded->device_id = device_id;
  ScopedContext scope(api, loaded->context);

  std::shared_ptr<const CompiledSource> compiled;
  const int driver_major = rt.DriverVersion() / 1000;
  if (fmt() == "cuda") compiled = CompiledFor(dev.sm(), driver_major, true);
  std::string log;
  CUresult rc = LoadData(api, compiled ? compiled->image : code(), &loaded->module, &log);
  if (rc != CUDA_SUCCESS && compiled && compiled->from_cache) {
    // A cached image the driver rejects (stale, damaged): drop it and compile afresh once.
    EvictCompiledSource(*compiled, "cuModuleLoadData: " + log);
    compiled = CompiledFor(dev.sm(), driver_major, false);
    rc = LoadData(api, compiled->image, &loaded->module, &log);
  }
  if (rc != CUDA_SUCCESS) {
    std::string what = "cuModuleLoadData of the CUDA module (format '" + fmt() + "'";
    if (compiled) what += ", compiled for " + compiled->target + " by " + compiled->compiler;
    what += ") on " + DescribeWithArch(dev);
    if (!log.empty()) what += " [JIT log: " + log + "]";
    loaded->module = nullptr;
    ThrowCuError(rc, what);
  }
  loaded->functions = backend::ResolveKernels<CUfunction>(
      kernel_names(), [&](const std::string& name, CUfunction* f) {
        CUresult found = api.ModuleGetFunction(f, loaded->module, name.c_str());
        if (found == CUDA_ERROR_NOT_FOUND) return false;
        CheckCu(found, "cuModuleGetFunction('" + name + "')");
        return true;
      });
  size_t n = num_kernels();
  loaded->dyn_smem_limit.reset(new std::atomic<uint32_t>[n]);
  for (size_t i = 0; i < n; ++i) {
    loaded->dyn_smem_limit[i].store(kDefaultDynSmemLimit, std::memory_order_relaxed);
  }
  return loaded;
}

::tvm::ffi::Module LoadCudaModule(std::string payload) {
  backend::KernelImagePayload parsed = backend::ParseKernelImagePayload(payload, "cuda");
  const std::string& fmt = parsed.header.fmt;
  if (fmt != "cuda" && !IsBinaryFormat(fmt)) RejectFormat(fmt);
  auto module = ::tvm::ffi::make_object<CudaModule>(std::move(payload), std::move(parsed));
  return ::tvm::ffi::Module(module);
}

Map<String, Any> DescribeCudaModule(const ::tvm::ffi::Module& module) {
  const CudaModule& cuda = backend::ModuleLoadedBy<CudaModule>(module, "tvm-runtime-cuda");
  return backend::DescribeFunctionTable(cuda.header());
}

}  // namespace cuda
}  // namespace tvm_runtime
