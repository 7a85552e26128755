/*
 * Fuzz target: a tensor cache directory (`vm.builtin.tensor_cache.load`, the sharded weight
 * format of tensor_cache_format.h).  An input is the index file followed by its shard files,
 * each after a separator line (seeds.py writes the real caches this way):
 *
 *   <tensor-cache.json> ["\n--tvmrt-shard--\n" <params_shard_i.bin>]...
 *
 * The parts are written into a private directory as tensor-cache.json and params_shard_<i>.bin
 * (the names the real indexes use), the cache is loaded onto the CPU (every record read into a
 * tensor), and the cache is cleared for the next input.
 */
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_runtime.h"

namespace {

namespace ffi = ::tvm::ffi;

constexpr char kSeparator[] = "\n--tvmrt-shard--\n";
constexpr size_t kMaxShards = 16;

ffi::Function load_cache, clear_cache;
std::string cache_dir;
size_t shards_written = 0;

void WriteFile(const std::string& path, const char* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) tvmrt_fuzz::SetupFailed("cannot write " + path);
  if (size != 0 && std::fwrite(data, 1, size, f) != size) tvmrt_fuzz::SetupFailed("short write");
  std::fclose(f);
}

std::string ShardPath(size_t i) {
  return cache_dir + "/params_shard_" + std::to_string(i) + ".bin";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tvmrt_fuzz::LoadRuntime({});
  load_cache = tvmrt_fuzz::Global("vm.builtin.tensor_cache.load");
  clear_cache = tvmrt_fuzz::Global("vm.builtin.tensor_cache.clear");
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/tvmrt-fuzz-tensor-cache-XXXXXX";
  if (mkdtemp(&pattern[0]) == nullptr) tvmrt_fuzz::SetupFailed("mkdtemp " + pattern);
  cache_dir = pattern;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  size_t end = input.find(kSeparator);
  WriteFile(cache_dir + "/tensor-cache.json", input.data(), std::min(end, input.size()));
  size_t shards = 0;
  while (end != std::string::npos && shards < kMaxShards) {
    size_t begin = end + sizeof(kSeparator) - 1;
    end = input.find(kSeparator, begin);
    size_t stop = end == std::string::npos ? input.size() : end;
    WriteFile(ShardPath(shards++), input.data() + begin, stop - begin);
  }
  for (size_t i = shards; i < shards_written; ++i) unlink(ShardPath(i).c_str());
  shards_written = shards;
  tvmrt_fuzz::ExpectHandled([&] { load_cache(ffi::String(cache_dir), 1, 0); });
  clear_cache();
  return 0;
}
