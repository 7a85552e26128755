#include "cache_flush.h"

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tvm_runtime {
namespace core {
namespace {

constexpr size_t kCacheLine = 64;

void EvictLines(const char* begin, size_t nbytes) {
  const char* end = begin + nbytes;
  for (const char* p = begin; p < end; p += kCacheLine) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_clflush(p);
#elif defined(__aarch64__)
    asm volatile("dc civac, %0" ::"r"(p) : "memory");
#else
    (void)p;  // no user-level cache maintenance instruction: leave the caches alone
#endif
  }
#if defined(__x86_64__) || defined(__i386__)
  _mm_mfence();
#elif defined(__aarch64__)
  asm volatile("dsb ish" ::: "memory");
#endif
}

void FlushNonFirstArgs(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  for (int i = 1; i < args.size(); ++i) {
    auto tensor = args[i].try_cast<DLTensor*>();
    if (!tensor.has_value() || (*tensor)->device.device_type != kDLCPU) continue;
    const DLTensor* t = *tensor;
    size_t count = 1;
    for (int d = 0; d < t->ndim; ++d) count *= static_cast<size_t>(t->shape[d]);
    size_t nbytes = (count * t->dtype.bits * t->dtype.lanes + 7) / 8;
    if (t->data != nullptr && nbytes != 0) {
      EvictLines(static_cast<const char*>(t->data) + t->byte_offset, nbytes);
    }
  }
}

}  // namespace

void RegisterCacheFlush() {
  ::tvm::ffi::reflection::GlobalDef().def_packed("cache_flush_cpu_non_first_arg",
                                                 FlushNonFirstArgs);
}

}  // namespace core
}  // namespace tvm_runtime
