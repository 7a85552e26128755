/*
 * The sharded tensor (weight) cache format of apache-tvm 0.27, as its writer
 * `tvm.contrib.tvmjs.dump_tensor_cache` (and MLC-LLM's convert_weight, which uses it) lays it out:
 *
 *   <dir>/tensor-cache.json   {"metadata": {...}, "records": [shard, ...]}
 *     shard:  {"dataPath": "params_shard_0.bin", "format": "raw-shard", "nbytes": N,
 *              "records": [record, ...], "md5sum": "..."}
 *     record: {"name": "w", "shape": [..], "dtype": "float16", "format": "raw" | "f32-to-bf16",
 *              "nbytes": n, "byteOffset": off}
 *   <dir>/params_shard_<i>.bin   the records' bytes, back to back, little-endian
 *
 * A float32 record in format "f32-to-bf16" stores the upper 16 bits of each value (bfloat16) and
 * is widened back to float32 on load; every other record (any dtype DLPack names: float16,
 * bfloat16, float8_*, int/uint of any width, bool, ...) is stored as is.
 */
#ifndef TVM_RUNTIME_CORE_LM_TENSOR_CACHE_FORMAT_H_
#define TVM_RUNTIME_CORE_LM_TENSOR_CACHE_FORMAT_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace core {
namespace lm {

struct TensorCacheRecord {
  std::string name;
  std::vector<int64_t> shape;
  DLDataType dtype;
  std::string format;
  int64_t nbytes = 0;
  int64_t byte_offset = 0;
};

struct TensorCacheShard {
  std::string data_path;
  int64_t nbytes = 0;
  std::vector<TensorCacheRecord> records;
};

/* Whether the record is stored narrowed to bfloat16 and widened to float32 on load (0.27's
 * writer marks every record of a bf16 dump "f32-to-bf16", but only float32 ones are narrowed;
 * the others are raw bytes). */
bool IsNarrowed(const TensorCacheRecord& rec);

/* Reads and validates `<dir>/tensor-cache.json` (or `dir` itself when it names a .json file, e.g.
 * the writer's tensor-cache-b16.json). Throws ValueError saying what is wrong with which
 * record. */
std::vector<TensorCacheShard> ReadTensorCacheIndex(const std::string& dir_or_json,
                                                   std::string* shard_dir);

/* Reads one shard file and returns its records as tensors on `device`, in record order (on the
 * CPU, mapped from the file where they can be: tensor_cache_shard_map.h).
 * A missing, truncated or oversized shard, or a record that does not fit it, is a ValueError
 * naming the shard and telling the user to fetch the cache again. */
std::vector<::tvm::ffi::Tensor> LoadTensorCacheShard(const std::string& shard_dir,
                                                     const TensorCacheShard& shard,
                                                     DLDevice device);

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_TENSOR_CACHE_FORMAT_H_
