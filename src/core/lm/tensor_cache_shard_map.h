/*
 * A tensor cache shard served to the CPU from the page cache: the records that can be used where
 * they lie become tensors over one copy-on-write mapping of the shard file, so every process that
 * loads the same cache shares one page-cache copy of the weights instead of holding its own.
 *
 *  - A "raw" record at a 64-byte aligned offset (the alignment compiled CPU kernels assume; the
 *    mapping itself is page aligned) aliases the mapping.  Nothing is read at load: its pages
 *    are faulted in, from the page cache, when a kernel first reads them.
 *  - The misaligned raw records of the shard go to the weight store (vm/constant_store.h) as one
 *    realigned image, mapped by every later load; when the store is off, the image is below its
 *    minimum size or the store cannot be used, they are copied into one private arena.  Both
 *    choices are the VM constant pool's (vm/constant_pool.h), as for a model's own weights.
 *  - "f32-to-bf16" records (widened on load) and empty ones are always left to the caller.
 *
 * Lifetime: every tensor holds the mapping (or the stored image); `tensor_cache.clear` /
 * `remove` drop the cache's references and the shard is unmapped when the last tensor (a VM's
 * argument, a param array) is gone.  Writes: the mapping is MAP_PRIVATE, so a write through such a
 * tensor copies that page into the writing process and never reaches the file or another process.
 * Integrity: the shard's length was checked before mapping (a short shard is a ValueError);
 * a shard replaced on disk by a new file (rename, a fresh download) leaves the mapping on the old
 * one; a shard truncated or rewritten in place while mapped is what it is for any mapped file:
 * reading a page past the new end kills the process with SIGBUS, rewritten pages not yet read
 * show the new bytes.  $TVM_TENSOR_CACHE_MMAP=0 turns mapping off (every record is copied into
 * private memory, as before), for caches on filesystems that may change under the process.
 */
#ifndef TVM_RUNTIME_CORE_LM_TENSOR_CACHE_SHARD_MAP_H_
#define TVM_RUNTIME_CORE_LM_TENSOR_CACHE_SHARD_MAP_H_

#include <tvm/ffi/container/tensor.h>

#include <memory>
#include <vector>

#include "tensor_cache_format.h"
#include "tensor_cache_shard_file.h"

namespace tvm_runtime {
namespace core {
namespace lm {

/* The raw tensors of `shard` on the CPU, in record order; an undefined tensor for each record
 * the caller must read itself (widened, empty).  All undefined when mapping is off or the
 * shard cannot be mapped.  `file` was checked to be `shard.nbytes` long. */
std::vector<::tvm::ffi::Tensor> MapTensorCacheShard(const ShardFile& file,
                                                    const TensorCacheShard& shard);

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_TENSOR_CACHE_SHARD_MAP_H_
