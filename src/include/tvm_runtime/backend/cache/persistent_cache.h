/*
 * The persistent kernel cache every GPU backend shares (OpenCL program binaries, Vulkan pipeline
 * caches, CUDA cubins): one policy, so that a first call in a fresh process takes milliseconds
 * instead of a driver compile, and so that the cache can never make a call fail.
 *
 *  - Where: $<PREFIX>_DIR, else $XDG_CACHE_HOME/tvm-runtime/<backend>, else
 *    ~/.cache/tvm-runtime/<backend>; $<PREFIX>_DISABLE=1 turns it off, $<PREFIX>_MAX_SIZE bounds
 *    it (bytes, or with a K/M/G suffix; default 512M).  PREFIX is e.g. TVM_OPENCL_CACHE.
 *  - Keys: a CacheKey (cache_entry.h) naming everything the bytes depend on; the file name is
 *    its digest and the entry repeats it, so an entry is used only for the key it was made for.
 *  - Writes are atomic (disk_cache.h): any number of processes may fill one directory at once.
 *  - Bounded: after each write the least recently used entries (by modification time, which a
 *    hit refreshes) are deleted until the directory fits; so are temporary files that a killed
 *    writer left behind.
 *  - Self-healing: a truncated, corrupt or foreign entry is a miss; the caller rebuilds from
 *    source and its Store replaces the bad file.  Nothing here throws: every failure is counted
 *    and remembered (Info()) and the caller goes on without the cache.
 */
#ifndef TVM_RUNTIME_BACKEND_CACHE_PERSISTENT_CACHE_H_
#define TVM_RUNTIME_BACKEND_CACHE_PERSISTENT_CACHE_H_

#include <dirent.h>
#include <sys/stat.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/cache/cache_entry.h>
#include <tvm_runtime/backend/cache/disk_cache.h>
#include <tvm_runtime/backend/global_function.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace backend {

constexpr uint64_t kDefaultCacheMaxBytes = uint64_t{512} << 20;
// A temporary file this old belongs to a writer that died; younger ones may still be written.
constexpr time_t kStaleTemporarySeconds = 3600;

/* "512M", "64k", "1G", "100000" -> bytes; false for anything else. */
inline bool ParseByteSize(const char* text, uint64_t* out) {
  if (text == nullptr || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  int shift = 0;
  switch (std::tolower(static_cast<unsigned char>(*end))) {
    case '\0':
      break;
    case 'k':
      shift = 10;
      break;
    case 'm':
      shift = 20;
      break;
    case 'g':
      shift = 30;
      break;
    default:
      return false;
  }
  if (*end != '\0' && end[1] != '\0' && !(std::tolower(end[1]) == 'b' && end[2] == '\0')) {
    return false;
  }
  if (shift != 0 && value > (~0ULL >> shift)) return false;
  *out = static_cast<uint64_t>(value) << shift;
  return true;
}

inline bool EnvFlagSet(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  std::string s(v);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

struct CachePolicy {
  std::string env_prefix;  // "TVM_OPENCL_CACHE": the _DIR, _DISABLE and _MAX_SIZE variables
  std::string root;        // the cache root ($<PREFIX>_DIR or the default)
  std::string dir;         // where entries live: root, or a directory inside it
  bool enabled = true;
  uint64_t max_bytes = kDefaultCacheMaxBytes;

  /* Read from the environment now (cheap: call it per build, so tests and long-running
   * processes see changes).  `subdir` is the default root below ~/.cache ("tvm-runtime/opencl");
   * `entries` an optional directory inside the root for the entries ("kernels"); `max_bytes`
   * the bound when $<PREFIX>_MAX_SIZE does not set one. */
  static CachePolicy FromEnvironment(const std::string& env_prefix, const std::string& subdir,
                                     const std::string& entries = "",
                                     uint64_t max_bytes = kDefaultCacheMaxBytes) {
    CachePolicy p;
    p.env_prefix = env_prefix;
    p.root = DefaultCacheRoot((env_prefix + "_DIR").c_str(), subdir);
    p.dir = entries.empty() ? p.root : p.root + "/" + entries;
    p.enabled = !EnvFlagSet((env_prefix + "_DISABLE").c_str());
    p.max_bytes = max_bytes;
    uint64_t bytes = 0;
    if (ParseByteSize(std::getenv((env_prefix + "_MAX_SIZE").c_str()), &bytes)) p.max_bytes = bytes;
    return p;
  }
};

/* Per-process counters of one backend's cache (shown by `python -m tvm.backend` and used by the
 * tests to tell a hit from a miss). */
struct CacheStats {
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> rejected{0};  // entries that existed but failed validation
  std::atomic<uint64_t> stored{0};
  std::atomic<uint64_t> store_failures{0};
  std::atomic<uint64_t> evicted{0};

  void Note(const std::string& message) {
    std::lock_guard<std::mutex> lock(mu_);
    last_problem_ = message;
  }
  std::string last_problem() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_problem_;
  }

 private:
  mutable std::mutex mu_;
  std::string last_problem_;
};

struct CacheUsage {
  uint64_t entries = 0;
  uint64_t bytes = 0;
};

class PersistentCache {
 public:
  PersistentCache(CachePolicy policy, CacheStats* stats)
      : policy_(std::move(policy)), stats_(stats), disk_(policy_.dir) {}

  bool enabled() const { return policy_.enabled; }
  const CachePolicy& policy() const { return policy_; }
  CacheStats& stats() const { return *stats_; }
  std::string PathOf(const CacheKey& key) const { return disk_.PathOf(key.FileName()); }
  const DiskCache& disk() const { return disk_; }

  /* True and the payload when a valid entry for `key` exists.  `check(payload)` may look
   * inside the payload (e.g. a driver's own header) and return why it is unusable, or nullptr. */
  template <typename Check>
  bool Load(const CacheKey& key, std::string* payload, Check check) const {
    if (!policy_.enabled) return false;
    std::string file;
    if (!disk_.Read(key.FileName(), &file)) {
      Missed();
      return false;
    }
    CacheEntryCheck status = DecodeCacheEntry(file, key, payload);
    const char* problem =
        status != CacheEntryCheck::kOk ? CacheEntryCheckName(status) : check(*payload);
    if (problem != nullptr) {
      payload->clear();
      Ignored(key, problem);
      return false;
    }
    Hit(key);
    return true;
  }

  /* Counts a hit on `key`'s entry and makes it the most recently used, so eviction takes
   * others first (for callers that read entries themselves, as the weight store maps them). */
  void Hit(const CacheKey& key) const {
    utimensat(AT_FDCWD, PathOf(key).c_str(), nullptr, 0);
    stats_->hits++;
  }

  /* Counts a miss: no entry for the key. */
  void Missed() const { stats_->misses++; }

  /* Counts a miss on an entry that exists but is unusable for `problem`. */
  void Ignored(const CacheKey& key, const std::string& problem) const {
    stats_->rejected++;
    stats_->misses++;
    stats_->Note("ignored " + PathOf(key) + " (" + problem + "): rebuilt and replaced");
  }

  bool Load(const CacheKey& key, std::string* payload) const {
    return Load(key, payload, [](const std::string&) -> const char* { return nullptr; });
  }

  /* A loaded entry that the driver refused after all: no longer a hit, and deleted, so that
   * the rebuild's Store replaces it. */
  void Rejected(const CacheKey& key, const std::string& why) const {
    stats_->hits--;
    stats_->misses++;
    stats_->rejected++;
    stats_->Note("the driver rejected " + PathOf(key) + " (" + why + "): rebuilt and replaced");
    disk_.Remove(key.FileName());
  }

  /* Atomically writes the entry, then trims the directory to the size limit. */
  bool Store(const CacheKey& key, const std::string& payload) const {
    if (!policy_.enabled) return false;
    std::string file = EncodeCacheEntry(key, payload);
    std::string error;
    if (Fits(file.size(), &error) && disk_.Write(key.FileName(), file, &error)) {
      Stored(key);
      return true;
    }
    StoreFailed(error);
    return false;
  }

  /* Whether an entry file of `bytes` may be stored at all; why not in `*error`. */
  bool Fits(uint64_t bytes, std::string* error) const {
    if (bytes <= policy_.max_bytes) return true;
    *error = "not caching " + std::to_string(bytes) + " bytes: more than " + policy_.env_prefix +
             "_MAX_SIZE (" + std::to_string(policy_.max_bytes) + " bytes)";
    return false;
  }

  /* Counts an entry written (by Store, or by a caller through disk()) and trims the directory
   * to the size limit, never evicting that entry. */
  void Stored(const CacheKey& key) const {
    stats_->stored++;
    Evict(policy_.max_bytes, key.FileName());
  }

  /* Counts and remembers a failed write. */
  void StoreFailed(const std::string& error) const {
    stats_->store_failures++;
    stats_->Note(error);
  }

  CacheUsage Usage() const {
    CacheUsage usage;
    for (const File& f : List(nullptr)) {
      usage.entries++;
      usage.bytes += f.size;
    }
    return usage;
  }

  /* Deletes least recently used entries until the directory holds at most `limit` bytes
   * (never `keep`, the entry just written); returns how many were deleted. */
  uint64_t Evict(uint64_t limit, const std::string& keep = "") const {
    std::vector<File> files = List(&stats_->evicted);
    uint64_t total = 0;
    for (const File& f : files) total += f.size;
    if (total <= limit) return 0;
    std::sort(files.begin(), files.end(), [](const File& a, const File& b) {
      return a.mtime_ns != b.mtime_ns ? a.mtime_ns < b.mtime_ns : a.name < b.name;
    });
    uint64_t removed = 0;
    for (const File& f : files) {
      if (total <= limit) break;
      if (f.name == keep) continue;
      // Another process may have evicted it first: that counts as gone all the same.
      if (std::remove(disk_.PathOf(f.name).c_str()) == 0 || errno == ENOENT) {
        total -= f.size;
        removed++;
      }
    }
    stats_->evicted += removed;
    return removed;
  }

  /* The cache as `python -m tvm.backend` shows it. */
  ::tvm::ffi::Map<::tvm::ffi::String, ::tvm::ffi::Any> Info() const {
    CacheUsage usage = Usage();
    ::tvm::ffi::Map<::tvm::ffi::String, ::tvm::ffi::Any> out;
    out.Set("dir", ::tvm::ffi::String(policy_.dir));
    out.Set("env_prefix", ::tvm::ffi::String(policy_.env_prefix));
    out.Set("enabled", policy_.enabled);
    out.Set("max_bytes", static_cast<int64_t>(policy_.max_bytes));
    out.Set("entries", static_cast<int64_t>(usage.entries));
    out.Set("bytes", static_cast<int64_t>(usage.bytes));
    out.Set("hits", static_cast<int64_t>(stats_->hits.load()));
    out.Set("misses", static_cast<int64_t>(stats_->misses.load()));
    out.Set("rejected", static_cast<int64_t>(stats_->rejected.load()));
    out.Set("stored", static_cast<int64_t>(stats_->stored.load()));
    out.Set("store_failures", static_cast<int64_t>(stats_->store_failures.load()));
    out.Set("evicted", static_cast<int64_t>(stats_->evicted.load()));
    out.Set("last_problem", ::tvm::ffi::String(stats_->last_problem()));
    return out;
  }

 private:
  struct File {
    std::string name;
    uint64_t size;
    int64_t mtime_ns;
  };

  static bool IsEntry(const std::string& name) {
    const std::string suffix = ".entry";
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  }

  /* The entries of the directory; deletes stale temporary files on the way (counted in
   * `*swept` when given). */
  std::vector<File> List(std::atomic<uint64_t>* swept) const {
    std::vector<File> files;
    DIR* d = opendir(policy_.dir.c_str());
    if (d == nullptr) return files;
    const time_t now = std::time(nullptr);
    while (struct dirent* e = readdir(d)) {
      std::string name = e->d_name;
      bool temporary = name.find(".entry.tmp.") != std::string::npos;
      if (!temporary && !IsEntry(name)) continue;
      struct stat st;
      if (stat(disk_.PathOf(name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (temporary) {
        if (swept != nullptr && now - st.st_mtime > kStaleTemporarySeconds &&
            std::remove(disk_.PathOf(name).c_str()) == 0) {
          (*swept)++;
        }
        continue;
      }
      files.push_back({name, static_cast<uint64_t>(st.st_size),
                       int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec});
    }
    closedir(d);
    return files;
  }

  CachePolicy policy_;
  CacheStats* stats_;
  DiskCache disk_;
};

/* Registers `tvm_runtime.<backend>.cache_info` () -> dict: PersistentCache::Info() of the cache
 * `make()` returns (called per query, so it reflects the current environment). */
template <typename MakeCache>
void RegisterCacheInfo(const char* backend, MakeCache make) {
  SetGlobalFunction(PrivateGlobalName(backend, "cache_info"), [make]() { return make().Info(); });
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_CACHE_PERSISTENT_CACHE_H_
