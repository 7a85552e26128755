/*
 * OpenCL program binaries: the persistent cache of built programs (the shared policy of
 * tvm_runtime/backend/cache/persistent_cache.h, in ~/.cache/tvm-runtime/opencl) and the driver
 * calls that read a binary out of a built program and build a program from one.
 *
 * A cache entry is keyed by the kernel's source, the build options, the platform, the device and
 * its driver version and the runtime version.  It is written after the kernel's first launch has
 * completed, not right after the build: drivers that compile per launch configuration (PoCL
 * compiles a work-group function at the first launch) include that code in the binary only then,
 * and it is what makes a warm first call take milliseconds.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_PROGRAM_CACHE_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_PROGRAM_CACHE_H_

#include <tvm_runtime/backend/cache/persistent_cache.h>

#include <string>

#include "cl_api.h"
#include "opencl_runtime.h"

namespace tvm_runtime {
namespace opencl {

/* TVM_OPENCL_CACHE_DIR, TVM_OPENCL_CACHE_DISABLE and TVM_OPENCL_CACHE_MAX_SIZE. */
constexpr const char* kCacheEnvPrefix = "TVM_OPENCL_CACHE";

/* The cache as the environment configures it now; its counters live as long as the process. */
backend::PersistentCache ProgramCache();

/* Whether the driver can hand out and take back program binaries. */
bool HasBinaryApi(const ClApi& cl);

backend::CacheKey ProgramCacheKey(const ClDevice& device, const std::string& source,
                                  const std::string& options);

/* The binary of `program`, built for one device; "" when the driver has none. */
std::string ProgramBinary(const ClApi& cl, cl_program program);

/* A program built from `binary` for `device`; nullptr with the driver's reason in `*error` when
 * the driver rejects the binary (made for another device or driver, or damaged). */
cl_program BuildProgramFromBinary(const ClApi& cl, const ClDevice& device,
                                  const std::string& binary, const std::string& options,
                                  std::string* error);

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_PROGRAM_CACHE_H_
