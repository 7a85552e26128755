#include "nvrtc/nvrtc_library.h"

#include <sys/stat.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

namespace tvm_runtime {
namespace cuda {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::Array;
using ::tvm::ffi::Map;
using ::tvm::ffi::String;

struct Candidate {
  std::string path;
  std::string found_via;
  std::vector<std::string> include_dirs;
  std::vector<std::string> cccl_dirs;
};

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> SplitPaths(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(':', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> StringList(const Map<String, Any>& m, const char* key) {
  std::vector<std::string> out;
  auto it = m.find(key);
  if (it == m.end()) return out;
  for (const Any& v : (*it).second.cast<Array<Any>>()) out.push_back(v.cast<String>());
  return out;
}

// The Python hook knows about pip wheels and conda (through cuda-pathfinder); C++ only loads.
std::vector<Candidate> FromLocator(int driver_major, std::string* notes) {
  std::vector<Candidate> out;
  auto locate = ::tvm::ffi::Function::GetGlobal(kNvrtcLocatorGlobal);
  if (!locate.has_value()) return out;
  try {
    Array<Any> found = (*locate)(driver_major).cast<Array<Any>>();
    for (const Any& item : found) {
      Map<String, Any> m = item.cast<Map<String, Any>>();
      Candidate c;
      c.path = m.at("path").cast<String>();
      c.found_via = m.at("found_via").cast<String>();
      c.include_dirs = StringList(m, "include_dirs");
      c.cccl_dirs = StringList(m, "cccl_dirs");
      out.push_back(std::move(c));
    }
  } catch (const std::exception& e) {
    *notes += std::string("; the NVRTC locator failed: ") + e.what();
  }
  return out;
}

// Toolkits and the CUDA 13 wheels keep headers next to lib/: <root>/include and, since CUDA 13,
// <root>/include/cccl.
void AddToolkitHeaders(NvrtcLibrary* c, const std::string& real_path) {
  size_t slash = real_path.rfind('/');
  if (slash == std::string::npos) return;
  std::string lib_dir = real_path.substr(0, slash);
  slash = lib_dir.rfind('/');
  if (slash == std::string::npos) return;
  std::string include = lib_dir.substr(0, slash) + "/include";
  if (IsFile(include + "/cuda_fp16.h")) c->include_dirs.push_back(include);
  if (IsFile(include + "/cccl/cuda/std/version")) {
    c->cccl_dirs.push_back(include + "/cccl");
  } else if (IsFile(include + "/cuda/std/version")) {
    c->cccl_dirs.push_back(include);
  }
}

std::vector<Candidate> Candidates(int driver_major, std::string* notes) {
  const char* env = std::getenv(kNvrtcPathEnvVar);
  if (env != nullptr && env[0] != '\0') {
    Candidate c{env, kNvrtcPathEnvVar, {}, {}};
    const char* inc = std::getenv(kNvrtcIncludeEnvVar);
    if (inc != nullptr) c.include_dirs = SplitPaths(inc);
    return {c};  // an explicit choice never falls back to something else
  }
  std::vector<Candidate> out = FromLocator(driver_major, notes);
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
    out.push_back(Candidate{name, "the system library path", {}, {}});
  }
  return out;
}

std::string ResolveNvrtcApi(void* handle, NvrtcApi* api) {
  backend::SymbolResolver r(handle);
  r.Required({"nvrtcVersion"}, &api->Version);
  r.Required({"nvrtcGetErrorString"}, &api->GetErrorString);
  r.Required({"nvrtcGetNumSupportedArchs"}, &api->GetNumSupportedArchs);
  r.Required({"nvrtcGetSupportedArchs"}, &api->GetSupportedArchs);
  r.Required({"nvrtcCreateProgram"}, &api->CreateProgram);
  r.Required({"nvrtcDestroyProgram"}, &api->DestroyProgram);
  r.Required({"nvrtcCompileProgram"}, &api->CompileProgram);
  r.Required({"nvrtcGetProgramLogSize"}, &api->GetProgramLogSize);
  r.Required({"nvrtcGetProgramLog"}, &api->GetProgramLog);
  r.Required({"nvrtcGetPTXSize"}, &api->GetPTXSize);
  r.Required({"nvrtcGetPTX"}, &api->GetPTX);
  r.Required({"nvrtcGetCUBINSize"}, &api->GetCUBINSize);
  r.Required({"nvrtcGetCUBIN"}, &api->GetCUBIN);
  r.Optional({"nvrtcInstallBundledHeaders"}, &api->InstallBundledHeaders);
  return r.missing();
}

// Loads one candidate; nullptr (and the reason appended to `tried`) if it is unusable.
std::unique_ptr<NvrtcLibrary> TryLoad(const Candidate& c, int driver_major, std::string* tried) {
  auto api = std::make_unique<NvrtcApi>();
  auto lib = std::make_unique<NvrtcLibrary>();
  backend::VendorLibrary opened =
      backend::OpenVendorLibrary({c.path}, [&](void* handle, std::string* why) {
        std::string missing = ResolveNvrtcApi(handle, api.get());
        if (!missing.empty()) {
          *why = "not an NVRTC library (missing " + missing + ")";
          return false;
        }
        if (api->Version(&lib->major, &lib->minor) != NVRTC_SUCCESS) {
          *why = "nvrtcVersion failed";
          return false;
        }
        if (driver_major > 0 && lib->major > driver_major) {
          // Its cubins use a newer ELF ABI and its PTX a newer ISA than this driver accepts.
          *why = "NVRTC " + lib->version() + " emits code for CUDA " + std::to_string(lib->major) +
                 " drivers, but the installed driver supports CUDA " + std::to_string(driver_major);
          return false;
        }
        return true;
      });
  if (opened.handle == nullptr) {
    *tried += (tried->empty() ? "" : "; ") + opened.tried + " (" + c.found_via + ")";
    return nullptr;
  }
  int n = 0;
  if (api->GetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
    lib->archs.resize(static_cast<size_t>(n));
    if (api->GetSupportedArchs(lib->archs.data()) != NVRTC_SUCCESS) lib->archs.clear();
    std::sort(lib->archs.begin(), lib->archs.end());
  }
  lib->path = opened.path;
  lib->found_via = c.found_via;
  lib->include_dirs = c.include_dirs;
  lib->cccl_dirs = c.cccl_dirs;
  // No headers named: look next to the library (a toolkit, or a pip wheel's include/).
  if (lib->include_dirs.empty() && lib->cccl_dirs.empty()) AddToolkitHeaders(lib.get(), lib->path);
  lib->api = api.release();  // lives as long as the library: for the process
  return lib;
}

[[noreturn]] void ThrowNotFound(int driver_major, const std::string& tried) {
  std::string which = "pip install \"tvm-runtime-cuda[nvrtc]\"";
  if (driver_major > 0 && driver_major < 13) {
    which = "pip install \"tvm-runtime-cuda[nvrtc-cu12]\" (this driver supports CUDA " +
            std::to_string(driver_major) + "; or upgrade the driver to R580+ for CUDA 13)";
  }
  backend::ThrowError(
      "RuntimeError",
      "this artifact holds its CUDA kernels as CUDA C++ source (apache-tvm stores source when it "
      "compiles without a CUDA toolkit), which tvm-runtime-cuda compiles with NVRTC on first use, "
      "but no usable NVRTC was found. Install it with: " +
          which + "; or set " + kNvrtcPathEnvVar +
          " to a libnvrtc.so; or re-export the model with a CUDA toolkit so it holds cubin. "
          "Tried: " +
          tried);
}

}  // namespace

std::string NvrtcLibrary::Describe() const {
  return "NVRTC " + version() + " (" + path + ", found via " + found_via + ")";
}

const NvrtcLibrary& GetNvrtc(int driver_major) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<NvrtcLibrary>> loaded;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = loaded.find(driver_major);
    if (it != loaded.end()) return *it->second;
  }
  // Searching may call into Python: never do that while holding a lock other threads need.
  std::string tried;
  std::vector<Candidate> candidates = Candidates(driver_major, &tried);
  for (const Candidate& c : candidates) {
    std::unique_ptr<NvrtcLibrary> lib = TryLoad(c, driver_major, &tried);
    if (lib == nullptr) continue;
    std::lock_guard<std::mutex> lock(mu);
    auto inserted = loaded.emplace(driver_major, std::move(lib));
    return *inserted.first->second;  // a concurrent search may have won; either is fine
  }
  // Not cached: a later call retries, e.g. after `pip install` in a notebook.
  ThrowNotFound(driver_major, tried.empty() ? "nothing" : tried);
}

}  // namespace cuda
}  // namespace tvm_runtime
