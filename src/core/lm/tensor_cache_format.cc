#include "tensor_cache_format.h"

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../ffi_names.h"
#include "../tensor_ops.h"
#include "tensor_cache_shard_file.h"
#include "tensor_cache_shard_map.h"

namespace tvm_runtime {
namespace core {
namespace lm {
namespace {

using JsonObject = ffi::Map<Any, Any>;
using JsonArray = ffi::Array<Any>;

constexpr const char* kIndexFile = "tensor-cache.json";
constexpr const char* kHowToFix =
    "; the tensor cache is incomplete or damaged: download or convert it again "
    "(tvm.contrib.tvmjs.dump_tensor_cache writes this format)";

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/* The whole file (one read into a buffer of its size: shards are tens of MB), or false when it
 * cannot be opened or read. */
bool ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  std::streamoff size = f.tellg();
  if (size < 0) return false;
  out->resize(static_cast<size_t>(size));
  f.seekg(0);
  return size == 0 || static_cast<bool>(f.read(&(*out)[0], size));
}

[[noreturn]] void Corrupt(const std::string& where, const std::string& what) {
  backend::ThrowError("ValueError", where + ": " + what + kHowToFix);
}

Any Field(const JsonObject& obj, const char* key, const std::string& where) {
  auto it = obj.find(Any(ffi::String(key)));
  if (it == obj.end()) Corrupt(where, std::string("missing field \"") + key + "\"");
  return (*it).second;
}

std::string StringField(const JsonObject& obj, const char* key, const std::string& where) {
  auto v = Field(obj, key, where).try_cast<ffi::String>();
  if (!v.has_value()) Corrupt(where, std::string("field \"") + key + "\" is not a string");
  return std::string(*v);
}

int64_t CountField(const JsonObject& obj, const char* key, const std::string& where) {
  Any v = Field(obj, key, where);
  if (v.type_index() != ffi::TypeIndex::kTVMFFIInt || v.cast<int64_t>() < 0) {
    Corrupt(where, std::string("field \"") + key + "\" is not a non-negative integer");
  }
  return v.cast<int64_t>();
}

JsonArray ArrayField(const JsonObject& obj, const char* key, const std::string& where) {
  auto v = Field(obj, key, where).try_cast<JsonArray>();
  if (!v.has_value()) Corrupt(where, std::string("field \"") + key + "\" is not a list");
  return *v;
}

JsonObject AsObject(const Any& v, const std::string& where) {
  auto obj = v.try_cast<JsonObject>();
  if (!obj.has_value()) Corrupt(where, "expected a JSON object");
  return *obj;
}

/* The dtype parser accepts any width ("float13"); a weight is one of the real ones. */
bool IsStorableDType(DLDataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLFloat:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLInt:
    case kDLUInt:
      return t.bits == 4 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLBfloat:
      return t.bits == 16;
    case kDLBool:
      return t.bits == 8;
    default:  // float8/float6/float4 variants: their width is fixed by the name
      return t.bits == 4 || t.bits == 6 || t.bits == 8;
  }
}

int64_t ElementBytes(DLDataType dtype) { return (dtype.bits * dtype.lanes + 7) / 8; }

TensorCacheRecord ParseRecord(const JsonObject& obj, const std::string& where) {
  TensorCacheRecord rec;
  rec.name = StringField(obj, "name", where);
  std::string at = where + " (\"" + rec.name + "\")";
  std::string dtype = StringField(obj, "dtype", at);
  bool known = false;
  try {
    rec.dtype = ffi::StringToDLDataType(ffi::String(dtype));
    known = IsStorableDType(rec.dtype);
  } catch (const ffi::Error&) {  // the parser rejects the name: reported just below
  }
  if (!known) Corrupt(at, "unknown dtype \"" + dtype + "\"");
  rec.format = StringField(obj, "format", at);
  rec.nbytes = CountField(obj, "nbytes", at);
  rec.byte_offset = CountField(obj, "byteOffset", at);
  int64_t numel = 1;
  for (const Any& d : ArrayField(obj, "shape", at)) {
    if (d.type_index() != ffi::TypeIndex::kTVMFFIInt || d.cast<int64_t>() < 0) {
      Corrupt(at, "shape holds something other than non-negative integers");
    }
    rec.shape.push_back(d.cast<int64_t>());
    int64_t dim = rec.shape.back();
    if (dim != 0 && numel > std::numeric_limits<int64_t>::max() / dim) {
      Corrupt(at, "shape is implausibly large (its element count does not fit in 64 bits)");
    }
    numel *= dim;
  }
  bool narrowed = IsNarrowed(rec);
  int64_t element_bytes = narrowed ? 2 : ElementBytes(rec.dtype);
  if (numel > std::numeric_limits<int64_t>::max() / element_bytes) {
    Corrupt(at, "shape is implausibly large (its size in bytes does not fit in 64 bits)");
  }
  if (rec.format != "raw" && rec.format != "f32-to-bf16") {
    backend::ThrowError("ValueError", at + ": record format \"" + rec.format +
                                          "\" is not supported (tvm-runtime reads \"raw\" and "
                                          "\"f32-to-bf16\", the formats apache-tvm 0.27 writes)");
  }
  int64_t expected = numel * element_bytes;
  if (rec.nbytes != expected) {
    Corrupt(at, "nbytes is " + std::to_string(rec.nbytes) + " but " + dtype + " of this shape" +
                    (narrowed ? " stored as bfloat16" : "") + " takes " + std::to_string(expected));
  }
  return rec;
}

TensorCacheShard ParseShard(const JsonObject& obj, const std::string& where) {
  TensorCacheShard shard;
  shard.data_path = StringField(obj, "dataPath", where);
  std::string at = where + " (" + shard.data_path + ")";
  std::string format = StringField(obj, "format", at);
  if (format != "raw-shard") {
    backend::ThrowError("ValueError", at + ": shard format \"" + format +
                                          "\" is not supported (only \"raw-shard\")");
  }
  if (shard.data_path.empty() || shard.data_path[0] == '/' ||
      shard.data_path.find("..") != std::string::npos) {
    Corrupt(at, "dataPath must be a file name inside the cache directory");
  }
  shard.nbytes = CountField(obj, "nbytes", at);
  JsonArray records = ArrayField(obj, "records", at);
  for (size_t i = 0; i < records.size(); ++i) {
    std::string rec_at = at + " record " + std::to_string(i);
    shard.records.push_back(ParseRecord(AsObject(records[i], rec_at), rec_at));
    const TensorCacheRecord& rec = shard.records.back();
    if (rec.byte_offset > shard.nbytes || rec.nbytes > shard.nbytes - rec.byte_offset) {
      Corrupt(rec_at + " (\"" + rec.name + "\")",
              "bytes [" + std::to_string(rec.byte_offset) + ", " +
                  std::to_string(rec.byte_offset + rec.nbytes) + ") lie outside the shard of " +
                  std::to_string(shard.nbytes) + " bytes");
    }
  }
  return shard;
}

/* Wraps host bytes as a tensor view (no ownership) so the device copy path can read them. */
DLTensor HostView(const void* data, const std::vector<int64_t>& shape, DLDataType dtype) {
  DLTensor t{};
  t.data = const_cast<void*>(data);
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = const_cast<int64_t*>(shape.data());
  return t;
}

// bfloat16 is the upper half of a float32: widen by shifting into the high 16 bits.
void WidenBF16(const char* src, size_t count, uint32_t* dst) {
  for (size_t i = 0; i < count; ++i) {
    uint16_t half;
    std::memcpy(&half, src + 2 * i, sizeof(half));
    dst[i] = static_cast<uint32_t>(half) << 16;
  }
}

/* Reads a narrowed record and widens it into `dst` (float32), a cache-sized chunk at a time. */
void ReadWidened(const TensorCacheRecord& rec, const ShardFile& file, uint32_t* dst) {
  constexpr int64_t kChunkBytes = 256 << 10;
  std::vector<char> chunk(static_cast<size_t>(std::min(kChunkBytes, rec.nbytes)));
  for (int64_t done = 0; done < rec.nbytes; done += kChunkBytes) {
    int64_t n = std::min(kChunkBytes, rec.nbytes - done);
    file.ReadAt(chunk.data(), n, rec.byte_offset + done);
    WidenBF16(chunk.data(), static_cast<size_t>(n / 2), dst + done / 2);
  }
}

/* A new tensor on `device` holding `rec`, read from `file`. A CPU tensor gets its
 * bytes directly; for other devices `staging` (reused between records) holds them on the host
 * for the upload. */
ffi::Tensor LoadRecord(const TensorCacheRecord& rec, const ShardFile& file, DLDevice device,
                       std::vector<char>* staging) {
  ffi::Tensor out =
      AllocTensor(ffi::ShapeView(rec.shape.data(), rec.shape.size()), rec.dtype, device);
  DLTensor* dst = const_cast<DLTensor*>(out.GetDLTensorPtr());
  bool narrowed = IsNarrowed(rec);
  char* host;
  if (dst->device.device_type == kDLCPU) {
    host = static_cast<char*>(dst->data) + dst->byte_offset;
  } else {
    staging->resize(static_cast<size_t>(narrowed ? rec.nbytes * 2 : rec.nbytes));
    host = staging->data();
  }
  if (narrowed) {
    ReadWidened(rec, file, reinterpret_cast<uint32_t*>(host));
  } else {
    file.ReadAt(host, rec.nbytes, rec.byte_offset);
  }
  if (dst->device.device_type != kDLCPU) {
    DLTensor view = HostView(host, rec.shape, rec.dtype);
    CopyTensor(&view, dst, CopyWait::kFinished);
  }
  return out;
}

}  // namespace

bool IsNarrowed(const TensorCacheRecord& rec) {
  return rec.format == "f32-to-bf16" && rec.dtype.code == kDLFloat && rec.dtype.bits == 32 &&
         rec.dtype.lanes == 1;
}

std::vector<TensorCacheShard> ReadTensorCacheIndex(const std::string& dir_or_json,
                                                   std::string* shard_dir) {
  std::string index_path;
  if (EndsWith(dir_or_json, ".json")) {
    index_path = dir_or_json;
    size_t slash = dir_or_json.find_last_of('/');
    *shard_dir = slash == std::string::npos ? "." : dir_or_json.substr(0, slash);
  } else {
    *shard_dir = dir_or_json;
    index_path = dir_or_json + "/" + kIndexFile;
  }
  std::string text;
  if (!ReadWholeFile(index_path, &text)) {
    backend::ThrowError("ValueError",
                        "cannot open the tensor cache index '" + index_path +
                            "': pass the directory that holds tensor-cache.json and its "
                            "params_shard_*.bin files (written by "
                            "tvm.contrib.tvmjs.dump_tensor_cache or mlc_llm convert_weight)");
  }
  // Deliberately never destroyed: a static ffi::Function would be released after tvm-ffi itself
  // at process exit.
  static const ffi::Function* parse =
      new ffi::Function(ffi::Function::GetGlobalRequired("ffi.json.Parse"));
  Any root;
  try {
    root = (*parse)(ffi::String(text));
  } catch (const ffi::Error& err) {
    backend::ThrowError("ValueError", index_path + " is not valid JSON (" + err.message().c_str() +
                                          ")" + kHowToFix);
  }
  JsonObject top = AsObject(root, index_path);
  JsonArray shards = ArrayField(top, "records", index_path);
  std::vector<TensorCacheShard> out;
  out.reserve(shards.size());
  for (size_t i = 0; i < shards.size(); ++i) {
    std::string at = index_path + " shard " + std::to_string(i);
    out.push_back(ParseShard(AsObject(shards[i], at), at));
  }
  return out;
}

std::vector<ffi::Tensor> LoadTensorCacheShard(const std::string& shard_dir,
                                              const TensorCacheShard& shard, DLDevice device) {
  ShardFile file(shard_dir + "/" + shard.data_path, kHowToFix);
  if (file.size() != shard.nbytes) {
    file.Fail("tensor cache shard '" + shard_dir + "/" + shard.data_path + "' has " +
              std::to_string(file.size()) + " bytes, tensor-cache.json says " +
              std::to_string(shard.nbytes));
  }
  // On the CPU, what can be shared with other processes is (tensor_cache_shard_map.h).
  std::vector<ffi::Tensor> tensors = device.device_type == kDLCPU
                                         ? MapTensorCacheShard(file, shard)
                                         : std::vector<ffi::Tensor>(shard.records.size());
  std::vector<char> staging;
  for (size_t i = 0; i < shard.records.size(); ++i) {
    if (!tensors[i].defined()) tensors[i] = LoadRecord(shard.records[i], file, device, &staging);
  }
  return tensors;
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
