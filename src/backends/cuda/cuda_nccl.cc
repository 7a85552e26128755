/*
 * runtime.disco.nccl.*: Disco's collectives between CUDA workers (tvm_runtime/backend/
 * disco_nccl.h), over NCCL opened at first use, never linked: $TVM_NCCL_LIBRARY alone when set,
 * else what the Python hook's locator finds (the nvidia-nccl-cu13 / -cu12 wheels, through
 * cuda-pathfinder), else libnccl.so.2 from $CONDA_PREFIX/lib and the system.
 */
#include "cuda_nccl.h"

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/disco/disco_nccl.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace cuda {

namespace {

namespace nccl = backend::nccl;

std::vector<std::string> Candidates() {
  const char* env = std::getenv(kNcclLibraryEnvVar);
  if (env != nullptr && env[0] != '\0') return {env};
  std::vector<std::string> out;
  // The hook knows the pip-wheel layouts; C++ only loads what it names.
  if (auto locate = ::tvm::ffi::Function::GetGlobal(kNcclLocatorGlobal)) {
    try {
      for (const ::tvm::ffi::Any& path : (*locate)().cast<::tvm::ffi::Array<::tvm::ffi::Any>>()) {
        out.push_back(std::string(path.cast<::tvm::ffi::String>()));
      }
    } catch (const std::exception&) {
      // A broken locator must not hide the system library.
    }
  }
  for (std::string& c : backend::VendorLibraryCandidates(nullptr, {"libnccl.so.2"})) {
    out.push_back(std::move(c));
  }
  return out;
}

const nccl::NcclLibrary& NcclLibraryOnce() {
  return nccl::OpenNcclLibraryOnce(Candidates, [] {
    return nccl::NcclLibraryInfo{
        "NCCL", "libnccl.so.2", "NCCL 2.x",
        "Install it with pip install \"tvm-runtime-cuda[nccl]\" (CUDA 13 drivers) or "
        "\"tvm-runtime-cuda[nccl-cu12]\" (CUDA 12), or install NCCL on the system, or set " +
            std::string(kNcclLibraryEnvVar) + " to the path of libnccl.so.2."};
  });
}

}  // namespace

void RegisterNcclGlobals() {
  static const nccl::DiscoNcclConfig config{"nccl", kDLCUDA, &NcclLibraryOnce};
  nccl::RegisterDiscoNccl(&config);
}

}  // namespace cuda
}  // namespace tvm_runtime
