#include "wgpu_library.h"

#include <dlfcn.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <cstdlib>
#include <mutex>
#include <utility>

namespace tvm_runtime {
namespace webgpu {

namespace {

std::mutex& CandidatesMutex() {
  static std::mutex mu;
  return mu;
}

std::vector<std::string>& HookCandidates() {
  static std::vector<std::string> paths;
  return paths;
}

std::string VersionString(uint32_t v) {
  return std::to_string((v >> 24) & 0xff) + "." + std::to_string((v >> 16) & 0xff) + "." +
         std::to_string((v >> 8) & 0xff) + "." + std::to_string(v & 0xff);
}

/* Resolves every entry point and checks the release; false with the reason otherwise. */
bool Resolve(void* handle, WgpuFunctions* fn, std::string* version, std::string* why) {
  WgpuFunctions out;
#define TVM_WEBGPU_RESOLVE(name, ret, params)                       \
  out.name = reinterpret_cast<ret(*) params>(dlsym(handle, #name)); \
  if (out.name == nullptr) {                                        \
    *why = "it does not export " #name                              \
           " (not a wgpu-native build, or a different "             \
           "WebGPU implementation)";                                \
    return false;                                                   \
  }
  TVM_WEBGPU_FUNCTIONS(TVM_WEBGPU_RESOLVE)
#undef TVM_WEBGPU_RESOLVE
  uint32_t v = out.wgpuGetVersion();
  *version = VersionString(v);
  if (((v >> 24) & 0xff) != kWgpuNativeMajor) {
    *why = "it is wgpu-native " + *version + ", but this backend speaks the C API of wgpu-native " +
           std::to_string(kWgpuNativeMajor) +
           ".x (pip install 'tvm-runtime-webgpu[wgpu]' installs a matching one)";
    return false;
  }
  *fn = out;
  return true;
}

}  // namespace

void SetHookLibraryCandidates(std::vector<std::string> paths) {
  std::lock_guard<std::mutex> lock(CandidatesMutex());
  HookCandidates() = std::move(paths);
}

#if defined(__APPLE__)
constexpr char kDefaultLibrary[] = "libwgpu_native.dylib";
#else
constexpr char kDefaultLibrary[] = "libwgpu_native.so";
#endif

const WgpuLibrary& GetWgpuLibrary() {
  static const WgpuLibrary* lib = [] {
    auto* out = new WgpuLibrary();  // leaked: the library stays open for the process
    std::vector<std::string> candidates;
    const char* env = std::getenv(kLibraryEnvVar);
    if (env != nullptr && env[0] != '\0') {
      candidates.push_back(env);
    } else {
      {
        std::lock_guard<std::mutex> lock(CandidatesMutex());
        candidates = HookCandidates();
      }
      for (std::string& c : backend::VendorLibraryCandidates(nullptr, {kDefaultLibrary})) {
        candidates.push_back(std::move(c));
      }
    }
    backend::VendorLibrary found =
        backend::OpenVendorLibrary(candidates, [out](void* handle, std::string* why) {
          return Resolve(handle, &out->fn, &out->version, why);
        });
    if (found.handle == nullptr) {
      out->error = "no usable wgpu-native library (tried: " + found.tried +
                   "). Install it with pip install 'tvm-runtime-webgpu[wgpu]' (the `wgpu` "
                   "package ships it), or set " +
                   kLibraryEnvVar + " to a " + kDefaultLibrary;
    } else {
      out->path = found.path;
    }
    return out;
  }();
  return *lib;
}

}  // namespace webgpu
}  // namespace tvm_runtime
