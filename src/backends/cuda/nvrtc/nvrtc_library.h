/*
 * Finding and loading NVRTC, which compiles the CUDA C++ source that apache-tvm 0.27 stores
 * whenever it compiled without a CUDA toolkit (module format "cuda").
 *
 * Where NVRTC comes from, in order:
 *  1. $TVM_CUDA_NVRTC_PATH (plus $TVM_CUDA_NVRTC_INCLUDE_DIRS), an explicit choice;
 *  2. the Python hook's locator `tvm_runtime.cuda.locate_nvrtc`, which asks cuda-pathfinder
 *     (pip wheels, conda, a system toolkit) and also returns the CUDA/CCCL header directories
 *     that belong to the same release;
 *  3. the system loader path (libnvrtc.so.13, libnvrtc.so.12).
 * The first candidate whose major version the driver can run is used; it is loaded once per
 * process and never unloaded.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_NVRTC_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_CUDA_NVRTC_LIBRARY_H_

#include <string>
#include <vector>

#include "nvrtc/nvrtc_api.h"

namespace tvm_runtime {
namespace cuda {

constexpr const char* kNvrtcPathEnvVar = "TVM_CUDA_NVRTC_PATH";
constexpr const char* kNvrtcIncludeEnvVar = "TVM_CUDA_NVRTC_INCLUDE_DIRS";
constexpr const char* kNvrtcLocatorGlobal = "tvm_runtime.cuda.locate_nvrtc";

struct NvrtcLibrary {
  const NvrtcApi* api = nullptr;
  std::string path;       // the file loaded
  std::string found_via;  // how it was found, e.g. "site-packages", "TVM_CUDA_NVRTC_PATH"
  int major = 0;
  int minor = 0;
  std::vector<int> archs;                 // supported sm numbers, ascending
  std::vector<std::string> include_dirs;  // CUDA headers (cuda_fp16.h, ...) of this release
  std::vector<std::string> cccl_dirs;     // CCCL headers (cuda/std/...) of this release

  bool has_bundled_headers() const { return api->InstallBundledHeaders != nullptr; }
  std::string version() const { return std::to_string(major) + "." + std::to_string(minor); }
  /* "NVRTC 13.5 (<path>, found via site-packages)" */
  std::string Describe() const;
};

/* NVRTC producing code that a driver supporting CUDA `driver_major` can load (0: any driver,
 * for compiling without a GPU).  Throws RuntimeError, naming what was tried and the pip command
 * that fixes it, when there is none. */
const NvrtcLibrary& GetNvrtc(int driver_major);

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_NVRTC_LIBRARY_H_
