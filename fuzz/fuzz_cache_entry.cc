/*
 * Fuzz target: the entry files of the persistent kernel caches
 * (tvm_runtime/backend/cache/cache_entry.h), which any process, a full disk or a crash may have
 * left in any state.  The parser must classify every input without reading out of bounds; an input
 * it accepts must describe itself consistently, and one that decodes for the harness's key must
 * re-encode to exactly the same bytes (nothing about an accepted entry is left unchecked).
 */
#include <tvm_runtime/backend/cache/cache_entry.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using tvm_runtime::backend::CacheEntryCheck;
using tvm_runtime::backend::CacheEntryView;
using tvm_runtime::backend::CacheKey;

// The key the seeds (fuzz/seeds.py) are entries of.
const CacheKey& HarnessKey() {
  static const CacheKey key = [] {
    CacheKey k("fuzz-entry/1");
    k.Add("runtime", "0.0.0").Add("driver_version", "fuzz driver 1.0");
    return k;
  }();
  return key;
}

void Require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  CacheEntryView view;
  CacheEntryCheck check = tvm_runtime::backend::ParseCacheEntry(bytes, size, &view);
  tvm_runtime::backend::CacheEntryCheckName(check);
  if (check == CacheEntryCheck::kOk) {
    Require(view.description == bytes + tvm_runtime::backend::kCacheEntryHeaderSize);
    Require(view.payload == view.description + view.description_size);
    Require(view.payload + view.payload_size == bytes + size);
  }
  std::string file(bytes, size);
  std::string payload;
  if (tvm_runtime::backend::DecodeCacheEntry(file, HarnessKey(), &payload) ==
      CacheEntryCheck::kOk) {
    Require(tvm_runtime::backend::EncodeCacheEntry(HarnessKey(), payload) == file);
  }
  return 0;
}
