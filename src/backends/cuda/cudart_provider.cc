/*
 * runtime.library_provider.libcudart (c_api.h 4a): host code that links the CUDA runtime
 * (DT_NEEDED libcudart.so.12 or .13: CUTLASS kernels, apache-tvm contrib code) loads with the
 * runtime from the nvidia-cuda-runtime pip wheel.  When the core's dlopen of such an artifact
 * fails for want of that soname, it calls this provider, which opens the file of exactly that
 * soname ($TVM_CUDART_LIBRARY, else what the hook's locator finds in the wheels, else
 * $CONDA_PREFIX/lib and the system) so the dynamic loader reuses it for the artifact.
 */
#include <dlfcn.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "pip_library.h"

namespace tvm_runtime {
namespace cuda {

namespace {

constexpr const char* kCudartLibraryEnvVar = "TVM_CUDART_LIBRARY";

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/* Loads the CUDA runtime of `soname` (e.g. libcudart.so.12) or throws naming the wheel. */
void ProvideCudart(const std::string& soname) {
  if (soname.rfind("libcudart.so", 0) != 0) {
    backend::ThrowError("ValueError", "'" + soname + "' is not a CUDA runtime soname");
  }
  bool cu12 = soname == "libcudart.so.12";
  PipLibrarySpec spec{"the CUDA runtime " + soname + " (which this artifact's host code links)",
                      kCudartLibraryEnvVar,
                      "cudart",
                      {soname},
                      cu12 ? "pip install \"tvm-runtime-cuda[cudart-cu12]\""
                           : "pip install \"tvm-runtime-cuda[cudart]\""};
  std::vector<std::string> candidates = PipLibraryCandidates(spec);
  const char* env = std::getenv(kCudartLibraryEnvVar);
  bool explicit_choice = env != nullptr && env[0] != '\0';
  std::string tried;
  for (const std::string& c : candidates) {
    // Only a file of this very soname satisfies the artifact's DT_NEEDED entry.
    if (!explicit_choice && c.find('/') != std::string::npos && BaseName(c) != soname) continue;
    if (dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr) return;  // kept for the process
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why ? why : c);
  }
  backend::ThrowError("RuntimeError", spec.what + " could not be opened. Install it with " +
                                          spec.install_hint + ", or set " + spec.env_var +
                                          " to its path. Tried: " +
                                          (tried.empty() ? std::string("nothing") : tried));
}

}  // namespace

void RegisterCudartProvider() {
  ::tvm::ffi::Function::SetGlobal(
      "runtime.library_provider.libcudart",
      ::tvm::ffi::Function::FromTyped(
          [](const ::tvm::ffi::String& soname) { ProvideCudart(std::string(soname)); }),
      /*override=*/true);
}

}  // namespace cuda
}  // namespace tvm_runtime
