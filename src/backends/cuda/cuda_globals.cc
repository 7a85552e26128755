/*
 * NVRTC and module introspection globals.  They let tools and tests compile an artifact's
 * source for any architecture without a GPU, and show what the runtime found and where.
 */
#include "cuda_globals.h"

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>

#include <cstdlib>
#include <string>

#include "cuda_library.h"
#include "cuda_module.h"
#include "cuda_runtime.h"
#include "nvrtc/nvrtc_compiler.h"
#include "nvrtc/nvrtc_library.h"

namespace tvm_runtime {
namespace cuda {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::Array;
using ::tvm::ffi::Map;
using ::tvm::ffi::String;

Array<String> Strings(const std::vector<std::string>& v) {
  Array<String> out;
  for (const std::string& s : v) out.push_back(s);
  return out;
}

Map<String, Any> NvrtcInfo(int driver_major) {
  const NvrtcLibrary& lib = GetNvrtc(driver_major);
  Array<int64_t> archs;
  for (int a : lib.archs) archs.push_back(a);
  Map<String, Any> out;
  out.Set("path", String(lib.path));
  out.Set("found_via", String(lib.found_via));
  out.Set("version", String(lib.version()));
  out.Set("supported_archs", archs);
  out.Set("bundled_headers", lib.has_bundled_headers());
  out.Set("include_dirs", Strings(lib.include_dirs));
  out.Set("cccl_dirs", Strings(lib.cccl_dirs));
  return out;
}

Map<String, Any> CompileSource(const std::string& source, const std::string& arch, int driver_major,
                               bool use_cache) {
  // Exactly the architecture named ("sm_90" stays sm_90; "sm_90a" asks for the arch-specific
  // target a Hopper device gets).
  CompiledSource c = CompileCudaSource(source, ParseCudaArch(arch), driver_major, use_cache);
  Map<String, Any> out;
  out.Set("image", ::tvm::ffi::Bytes(c.image));
  out.Set("format", String(c.is_ptx ? "ptx" : "cubin"));
  out.Set("target", String(c.target));
  out.Set("compiler", String(c.compiler));
  out.Set("cache_file", String(c.cache_entry.empty() ? "" : c.cache_dir + "/" + c.cache_entry));
  out.Set("from_cache", c.from_cache);
  out.Set("options", Strings(c.options));
  return out;
}

Map<String, Any> DriverInfo() {
  CudaRuntime& rt = CudaRuntime::Global();
  Map<String, Any> out;
  out.Set("device_count", static_cast<int64_t>(rt.NumDevices()));
  out.Set("status", String(rt.Status()));
  out.Set("driver_version", static_cast<int64_t>(rt.DriverVersion()));
  out.Set("library", String(GetCudaLibrary().path));
  return out;
}

}  // namespace

void RegisterCompilerGlobals() {
  auto name = [](const char* what) { return backend::PrivateGlobalName("cuda", what); };
  backend::SetGlobalFunction(name("nvrtc_info"), NvrtcInfo);
  backend::SetGlobalFunction(name("compile_source"), CompileSource);
  backend::SetGlobalFunction(name("describe_module"),
                             [](const ::tvm::ffi::Module& mod) { return DescribeCudaModule(mod); });
  backend::SetGlobalFunction(name("cache_dir"), [] { return String(CudaCacheRoot()); });
  backend::RegisterCacheInfo("cuda", [] { return KernelCache(); });
  backend::SetGlobalFunction(name("driver_info"), DriverInfo);
}

}  // namespace cuda
}  // namespace tvm_runtime
