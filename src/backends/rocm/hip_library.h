/*
 * The HIP runtime (libamdhip64.so), opened with dlopen on first device use (never at import or
 * registration), so the backend loads on machines without ROCm and says exactly what is missing.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_HIP_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_ROCM_HIP_LIBRARY_H_

#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <string>
#include <vector>

#include "hip_api.h"

namespace tvm_runtime {
namespace rocm {

/* Environment variable naming the HIP runtime library to open instead of searching for it. */
constexpr const char* kHipLibraryEnvVar = "TVM_ROCM_LIBRARY";

/* api (null when loading failed), path, failure (what was tried and how to fix it). */
using HipLibrary = backend::VendorApi<HipApi>;

/* Where libamdhip64 is looked for: $TVM_ROCM_LIBRARY alone when set; else $ROCM_PATH/lib, then
 * $CONDA_PREFIX/lib, then the system's search, then /opt/rocm/lib (ROCm's default prefix, which
 * the dynamic linker is not always configured for). */
std::vector<std::string> HipLibraryCandidates();

/* Opens the library on the first call (thread-safe) and returns the same result afterwards. */
const HipLibrary& GetHipLibrary();

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_HIP_LIBRARY_H_
