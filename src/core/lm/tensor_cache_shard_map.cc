#include "tensor_cache_shard_map.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../ffi_names.h"
#include "../mapped_file.h"
#include "../vm/constant_pool.h"
#include "../vm/payload.h"

namespace tvm_runtime {
namespace core {
namespace lm {
namespace {

bool MappingEnabled() {
  const char* v = std::getenv("TVM_TENSOR_CACHE_MMAP");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

/* A record whose bytes are the tensor's as they lie in the file (no widening), and that has
 * some: an empty tensor gets its own allocation (compiled code rejects a NULL data pointer and a
 * pointer at the end of a mapping is worse). */
bool UsableAsIs(const TensorCacheRecord& rec) { return !IsNarrowed(rec) && rec.nbytes > 0; }

}  // namespace

std::vector<ffi::Tensor> MapTensorCacheShard(const ShardFile& file, const TensorCacheShard& shard) {
  std::vector<ffi::Tensor> out(shard.records.size());
  if (!MappingEnabled() || shard.nbytes == 0) return out;
  auto mapping = std::make_shared<const MappedFile>(file.fd(), MappedFile::Mode::kCopyOnWrite);
  // The length check of the caller used the same descriptor; a file changed in between is
  // read privately, where every read is checked.
  if (!mapping->ok() || mapping->size() != static_cast<size_t>(shard.nbytes)) return out;

  // The VM's constant pool makes the choice per record, as for a model's embedded weights:
  // aliasing the mapping (64-byte aligned), the weight store's image of all misaligned ones, or
  // a private copy when the store is off; its tensors keep what they point into alive.
  auto payload =
      std::make_shared<const vm::MappedPayload>(mapping, mapping->data(), mapping->size());
  vm::ConstantPool pool(payload);
  std::vector<size_t> pooled;
  for (size_t i = 0; i < shard.records.size(); ++i) {
    const TensorCacheRecord& rec = shard.records[i];
    if (!UsableAsIs(rec)) continue;
    pool.AddTensor(rec.dtype, rec.shape, mapping->data() + rec.byte_offset,
                   static_cast<uint64_t>(rec.nbytes));
    pooled.push_back(i);
  }
  for (size_t k = 0; k < pooled.size(); ++k) out[pooled[k]] = pool.Host(k);
  return out;
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
