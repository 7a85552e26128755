#include "tensor_cache_shard_map.h"

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/dtype.h>
#include <tvm_runtime/c_api.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../ffi_names.h"
#include "../mapped_file.h"
#include "../vm/constant_store.h"
#include "../vm/payload.h"

namespace tvm_runtime {
namespace core {
namespace lm {
namespace {

constexpr uint64_t kAlignment = TVM_RUNTIME_ALLOC_ALIGNMENT;

/* NDAlloc of a CPU tensor over bytes that `keep` (the shard's mapping or the stored image)
 * holds; the tensor owns a reference, so the bytes outlive the cache entry. */
struct SharedBytes {
  std::shared_ptr<const void> keep;
  char* bytes;
  void AllocData(DLTensor* t) { t->data = bytes; }
  void FreeData(DLTensor*) {}
};

ffi::Tensor SharedTensor(std::shared_ptr<const void> keep, char* bytes,
                         const TensorCacheRecord& rec) {
  return ffi::Tensor::FromNDAlloc(SharedBytes{std::move(keep), bytes},
                                  ffi::ShapeView(rec.shape.data(), rec.shape.size()), rec.dtype,
                                  DLDevice{kDLCPU, 0});
}

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

  std::vector<vm::RealignedSlot> slots;
  std::vector<size_t> slot_record;
  uint64_t image_bytes = 0;
  for (size_t i = 0; i < shard.records.size(); ++i) {
    const TensorCacheRecord& rec = shard.records[i];
    if (!UsableAsIs(rec)) continue;
    char* bytes = mapping->data() + rec.byte_offset;
    if (rec.byte_offset % kAlignment == 0) {
      out[i] = SharedTensor(mapping, bytes, rec);
      continue;
    }
    std::string layout = std::string(ffi::DLDataTypeToString(rec.dtype)) + "[";
    for (size_t d = 0; d < rec.shape.size(); ++d) {
      layout += (d ? ", " : "") + std::to_string(rec.shape[d]);
    }
    slots.push_back({bytes, static_cast<uint64_t>(rec.nbytes), image_bytes, layout + "]"});
    slot_record.push_back(i);
    image_bytes += (static_cast<uint64_t>(rec.nbytes) + kAlignment - 1) / kAlignment * kAlignment;
  }
  if (slots.empty()) return out;
  vm::MappedPayload payload(mapping, mapping->data(), mapping->size());
  std::shared_ptr<const vm::StoredImage> image = vm::MapRealignedImage(payload, slots, image_bytes);
  if (image == nullptr) return out;  // no store: the caller copies them
  for (size_t s = 0; s < slots.size(); ++s) {
    out[slot_record[s]] =
        SharedTensor(image, image->at(slots[s].offset), shard.records[slot_record[s]]);
  }
  return out;
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
