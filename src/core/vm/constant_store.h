/*
 * The weight store: the CPU constants of a model that must be realigned, kept once on disk and
 * mapped by every process that loads the model, so N processes hold one page-cache copy of them
 * instead of N private ones.
 *
 * apache-tvm 0.27 embeds constants in the library at whatever offset they land, and compiled CPU
 * kernels assume 64-byte aligned data, so a misaligned constant cannot alias the library's
 * mapping as an aligned one does (constant_pool.h).  Its realigned image (the layout the private
 * host arena would have) is written once to an entry of the kernel caches' format and policy
 * (tvm_runtime/backend/cache/persistent_cache.h): $TVM_WEIGHT_CACHE_DIR (default
 * ~/.cache/tvm-runtime/weights), _DISABLE, _MAX_SIZE (default 4G), and _MIN_SIZE (default 1M:
 * smaller images are copied privately, not worth a file).
 *
 *  - Key: the runtime version, the layout (dtype, shape, size and slot of every realigned
 *    constant) and a fast hash of their bytes (content_hash.h).
 *  - Hit: the entry is mapped copy-on-write (never written by the VM; a write through a tensor
 *    would stay in that process, as with the library's mapping) after its framing, key and every
 *    constant byte were compared with the model's own: a truncated, garbled or foreign entry is a
 *    miss and is rewritten, and the store can never change what a model computes.
 *  - Miss: the image is written straight from the model to a temporary file, which this process
 *    maps and then renames into place.  Writers take a lock on the directory, so processes that
 *    load one model at once write it once and all map that one file.
 *  - Lifetime: tensors keep the mapping alive; an entry evicted or replaced meanwhile only loses
 *    its name, the mapped file lives until the last tensor is gone.
 *  - Failure (directory read-only, disk full, bound exceeded): the caller copies the constants
 *    privately as without a store; the reason is counted, kept for `cache_info` and printed to
 *    stderr once per process.
 */
#ifndef TVM_RUNTIME_CORE_VM_CONSTANT_STORE_H_
#define TVM_RUNTIME_CORE_VM_CONSTANT_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../mapped_file.h"
#include "payload.h"

namespace tvm_runtime {
namespace core {
namespace vm {

/* One constant of the realigned image: its bytes in the model's payload and where they go. */
struct RealignedSlot {
  const char* data;
  uint64_t nbytes;
  uint64_t offset;     // in the image; a multiple of the 64-byte alignment
  std::string layout;  // dtype and shape, for the key
};

/* A realigned image mapped from the store; shared by the tensors that point into it. */
class StoredImage {
 public:
  StoredImage(std::unique_ptr<MappedFile> file, const char* image)
      : file_(std::move(file)), image_(image) {}
  char* at(uint64_t offset) const { return const_cast<char*>(image_) + offset; }

 private:
  std::unique_ptr<MappedFile> file_;
  const char* image_;
};

/* The image of `slots` (`image_bytes` long) mapped from the store, written there first when it
 * is not yet; nullptr when the store is off, the image is below the minimum size or the store
 * cannot be used (then the caller copies the constants privately). */
std::shared_ptr<const StoredImage> MapRealignedImage(const Payload& payload,
                                                     const std::vector<RealignedSlot>& slots,
                                                     uint64_t image_bytes);

/* Registers tvm_runtime.weights.cache_info (the store's directory, bound, counters). */
void RegisterWeightStoreInfo();

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_CONSTANT_STORE_H_
