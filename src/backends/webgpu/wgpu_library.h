/*
 * Opening wgpu-native at first use.  The library is never linked: `TVM_WEBGPU_LIBRARY` names it
 * when set; otherwise the paths the Python hook found (the library the `wgpu` PyPI package ships,
 * or `WGPU_LIB_PATH`, the variable that package documents), then `libwgpu_native.so` from
 * $CONDA_PREFIX/lib and the system's search.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WGPU_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WGPU_LIBRARY_H_

#include <string>
#include <vector>

#include "wgpu_api.h"

namespace tvm_runtime {
namespace webgpu {

constexpr const char* kLibraryEnvVar = "TVM_WEBGPU_LIBRARY";

struct WgpuLibrary {
  WgpuFunctions fn;
  std::string path;     // the file that was opened; empty when none could be used
  std::string version;  // "29.0.1.1"
  std::string error;    // why no library could be used (what was tried, how to fix it)
  bool ok() const { return error.empty(); }
};

/* Paths to try before the system's search (set by the Python hook at registration). */
void SetHookLibraryCandidates(std::vector<std::string> paths);

/* Opens the library once per process and resolves every entry point; never throws. */
const WgpuLibrary& GetWgpuLibrary();

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WGPU_LIBRARY_H_
