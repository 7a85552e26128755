/*
 * runtime.disco.rccl.*: Disco's collectives between ROCm workers (tvm_runtime/backend/
 * disco_nccl.h: RCCL keeps NCCL's API), over RCCL opened at first use, never linked:
 * $TVM_RCCL_LIBRARY alone when set, else $ROCM_PATH/lib, $CONDA_PREFIX/lib, the system, then
 * /opt/rocm/lib (where the HIP runtime is looked for too).
 */
#include "rocm_rccl.h"

#include <tvm_runtime/backend/disco/disco_nccl.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace rocm {

namespace {

namespace nccl = backend::nccl;

std::vector<std::string> Candidates() {
  const char* env = std::getenv(kRcclLibraryEnvVar);
  if (env != nullptr && env[0] != '\0') return {env};
  std::vector<std::string> out;
  const char* rocm_path = std::getenv("ROCM_PATH");
  if (rocm_path != nullptr && rocm_path[0] != '\0')
    out.push_back(std::string(rocm_path) + "/lib/librccl.so.1");
  for (std::string& c : backend::VendorLibraryCandidates(nullptr, {"librccl.so.1", "librccl.so"})) {
    out.push_back(std::move(c));
  }
  out.push_back("/opt/rocm/lib/librccl.so.1");
  return out;
}

const nccl::NcclLibrary& Library() {
  return nccl::OpenNcclLibraryOnce(Candidates, [] {
    return nccl::NcclLibraryInfo{
        "RCCL", "librccl.so.1", "RCCL from ROCm 6.0 or newer",
        "Install ROCm's RCCL (e.g. the `rccl` package), set ROCM_PATH to the ROCm installation, "
        "or set " +
            std::string(kRcclLibraryEnvVar) + " to the path of librccl.so.1."};
  });
}

}  // namespace

void RegisterRcclGlobals() {
  static const nccl::DiscoNcclConfig config{"rccl", kDLROCM, &Library};
  nccl::RegisterDiscoNccl(&config);
}

}  // namespace rocm
}  // namespace tvm_runtime
