/*
 * Compiling an artifact's CUDA C++ source (module format "cuda") for one GPU architecture with
 * NVRTC, through an on-disk cache.
 *
 * Target: a cubin for the device's exact sm_XY when NVRTC supports it (a cubin loads on every
 * driver of the NVRTC's major release, no JIT); otherwise PTX for the newest architecture NVRTC
 * knows below the device, which the (necessarily newer) driver JIT-compiles.
 *
 * Cache: $TVM_CUDA_CACHE_DIR, else ~/.cache/tvm-runtime/cuda ($XDG_CACHE_HOME honoured); entries
 * are keyed by sha256(source), the target, the NVRTC version and a hash of the options and
 * headers; TVM_CUDA_CACHE_DISABLE=1 turns it off.  Options follow apache-tvm 0.27's NVRTC path
 * (fast math on); TVM_CUDA_NVRTC_FAST_MATH=0 turns fast math off and TVM_CUDA_NVRTC_EXTRA_OPTS
 * appends options.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_NVRTC_COMPILER_H_
#define TVM_RUNTIME_BACKENDS_CUDA_NVRTC_COMPILER_H_

#include <string>
#include <vector>

namespace tvm_runtime {
namespace cuda {

constexpr const char* kCacheDirEnvVar = "TVM_CUDA_CACHE_DIR";
constexpr const char* kCacheDisableEnvVar = "TVM_CUDA_CACHE_DISABLE";

struct CompiledSource {
  std::string image;  // cubin (ELF) or PTX text; both loadable by cuModuleLoadData
  bool is_ptx = false;
  std::string target;       // "sm_86" (cubin) or "compute_80" (PTX)
  std::string compiler;     // NVRTC description, for messages
  std::string cache_dir;    // "" when the cache is disabled
  std::string cache_entry;  // file name inside cache_dir ("" when not cached)
  bool from_cache = false;
  std::vector<std::string> options;  // what NVRTC was (or would have been) given
};

/* Compiles `source` for a GPU with compute capability `sm` (e.g. 86).  `driver_major` is the
 * CUDA major version the driver supports (0 when compiling without a GPU).  Throws
 * RuntimeError with NVRTC's log on failure. */
CompiledSource CompileCudaSource(const std::string& source, int sm, int driver_major,
                                 bool use_cache);

/* Removes a cache entry whose image the driver rejected, so the next load recompiles. */
void EvictCompiledSource(const CompiledSource& compiled);

/* The cache root (compiled kernels live in <root>/kernels, NVRTC's headers in <root>/headers). */
std::string CudaCacheRoot();

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_NVRTC_COMPILER_H_
