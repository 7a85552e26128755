/*
 * Compiling an artifact's CUDA C++ source (module format "cuda") for one GPU architecture with
 * NVRTC, through an on-disk cache.
 *
 * Target: a cubin for the device's exact architecture when NVRTC supports it (a cubin loads on
 * every driver of the NVRTC's major release, no JIT): from compute capability 9.0 on the
 * arch-specific target (sm_90a, sm_100a, sm_120a...), as apache-tvm 0.27's CUDA target picks for
 * the GPU it detects, so kernels using wgmma, tcgen05, setmaxnreg... compile; an NVRTC that
 * rejects the arch-specific name (NVRTC_ERROR_INVALID_OPTION) gets the plain sm_XY.  Otherwise
 * PTX for the newest architecture NVRTC knows below the device (portable compute_XY, never an
 * arch-specific one), which the (necessarily newer) driver JIT-compiles.
 *
 * Cache: the shared persistent-cache policy (tvm_runtime/backend/cache/persistent_cache.h) in
 * <root>/kernels, root = $TVM_CUDA_CACHE_DIR, else ~/.cache/tvm-runtime/cuda ($XDG_CACHE_HOME
 * honoured); entries are keyed by the source, the target, the NVRTC version, the options and
 * headers and the runtime version; TVM_CUDA_CACHE_DISABLE=1 turns it off and
 * TVM_CUDA_CACHE_MAX_SIZE bounds it (default 512M).  Options follow apache-tvm 0.27's NVRTC path
 * (fast math on); TVM_CUDA_NVRTC_FAST_MATH=0 turns fast math off and TVM_CUDA_NVRTC_EXTRA_OPTS
 * appends options.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_NVRTC_COMPILER_H_
#define TVM_RUNTIME_BACKENDS_CUDA_NVRTC_COMPILER_H_

#include <tvm_runtime/backend/cache/persistent_cache.h>

#include <memory>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace cuda {

/* TVM_CUDA_CACHE_DIR, TVM_CUDA_CACHE_DISABLE and TVM_CUDA_CACHE_MAX_SIZE. */
constexpr const char* kCacheEnvPrefix = "TVM_CUDA_CACHE";

/* A GPU architecture to compile for. */
struct CudaArch {
  int sm = 0;         // compute capability, major * 10 + minor (90 for sm_90a)
  char variant = 0;   // 0: sm_XY, 'a': arch-specific sm_XYa, 'f': family-specific sm_XYf
  bool exact = true;  // false: the arch-specific variant may fall back to the plain sm_XY

  std::string Name() const;  // "sm_90a"
};

/* What a device of compute capability `sm` is compiled for: arch-specific from 9.0 on (as
 * apache-tvm 0.27's detected target), falling back to plain where NVRTC lacks it. */
CudaArch DeviceArch(int sm);

/* "sm_86", "sm_90a" or "sm_100f", compiled for exactly that; a ValueError for anything else. */
CudaArch ParseCudaArch(const std::string& arch);

struct CompiledSource {
  std::string image;  // cubin (ELF) or PTX text; both loadable by cuModuleLoadData
  bool is_ptx = false;
  std::string target;                            // "sm_90a" (cubin) or "compute_80" (PTX)
  std::string compiler;                          // NVRTC description, for messages
  std::string cache_dir;                         // "" when the cache is disabled
  std::string cache_entry;                       // file name inside cache_dir ("" when not cached)
  std::shared_ptr<backend::CacheKey> cache_key;  // null when the cache is disabled
  bool from_cache = false;
  std::vector<std::string> options;  // what NVRTC was (or would have been) given
};

/* Compiles `source` for `arch`.  `driver_major` is the CUDA major version the driver supports
 * (0 when compiling without a GPU).  Throws RuntimeError with NVRTC's log on failure. */
CompiledSource CompileCudaSource(const std::string& source, const CudaArch& arch, int driver_major,
                                 bool use_cache);

/* Removes a cache entry whose image the driver rejected, so the next load recompiles. */
void EvictCompiledSource(const CompiledSource& compiled, const std::string& why);

/* The cache root (compiled kernels live in <root>/kernels, NVRTC's headers in <root>/headers). */
std::string CudaCacheRoot();

/* The compiled-kernel cache as the environment configures it now. */
backend::PersistentCache KernelCache();

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_NVRTC_COMPILER_H_
