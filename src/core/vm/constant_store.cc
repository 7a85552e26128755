#include "constant_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <tvm_runtime/backend/cache/persistent_cache.h>
#include <tvm_runtime/c_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "../content_hash.h"

namespace tvm_runtime {
namespace core {
namespace vm {

namespace {

constexpr const char* kEnvPrefix = "TVM_WEIGHT_CACHE";
// Part of every key: bump when the image layout or its key changes.
constexpr const char* kStoreKind = "cpu-constants/2";
constexpr uint64_t kDefaultMaxBytes = uint64_t{4} << 30;
constexpr uint64_t kDefaultMinBytes = uint64_t{1} << 20;
constexpr uint64_t kAlignment = TVM_RUNTIME_ALLOC_ALIGNMENT;
// How long a loader waits for another process writing into the store before writing itself.
constexpr auto kLockWait = std::chrono::seconds(30);

backend::PersistentCache WeightStore() {
  static backend::CacheStats stats;
  return backend::PersistentCache(backend::CachePolicy::FromEnvironment(
                                      kEnvPrefix, "tvm-runtime/weights", "", kDefaultMaxBytes),
                                  &stats);
}

uint64_t MinImageBytes() {
  uint64_t bytes = kDefaultMinBytes;
  backend::ParseByteSize(std::getenv("TVM_WEIGHT_CACHE_MIN_SIZE"), &bytes);
  return bytes;
}

/* A store problem that makes this process copy its constants privately: kept for cache_info,
 * and said once per process on stderr (a server should know why its workers share nothing). */
void Fallback(const backend::PersistentCache& store, const std::string& why) {
  store.StoreFailed(why);
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    std::fprintf(stderr,
                 "tvm-runtime: weight cache: %s; constants are copied privately (set "
                 "%s_DIR to a writable directory, or %s_DISABLE=1)\n",
                 why.c_str(), kEnvPrefix, kEnvPrefix);
  }
}

/* Drops the model's copy of the constants from memory once the store is done reading them. */
struct ReleaseWhenDone {
  const Payload& payload;
  const std::vector<RealignedSlot>& slots;
  ~ReleaseWhenDone() {
    for (const RealignedSlot& s : slots) payload.Release(s.data, static_cast<size_t>(s.nbytes));
  }
};

/* The key of an image: what it is, for which runtime, its layout and its bytes.  The padding
 * line makes the entry's header a multiple of the alignment, so the image, and every constant
 * in it, is aligned in the mapped file. */
backend::CacheKey KeyOf(const std::vector<RealignedSlot>& slots, uint64_t image_bytes) {
  std::string layout;
  ContentHash hash;
  for (const RealignedSlot& s : slots) {
    layout += s.layout + " " + std::to_string(s.nbytes) + "@" + std::to_string(s.offset) + "\n";
    hash.Update(s.data, static_cast<size_t>(s.nbytes));
  }
  char digest[17];
  std::snprintf(digest, sizeof(digest), "%016llx", static_cast<unsigned long long>(hash.value()));
  backend::CacheKey key(kStoreKind);
  key.Add("runtime", TVMRuntimeVersion())
      .Add("pointer_bits", std::to_string(8 * sizeof(void*)))
      .Add("image_bytes", std::to_string(image_bytes))
      .AddContent("layout", layout)
      .Add("content", digest);
  size_t header = backend::kCacheEntryHeaderSize + key.description().size() + 7;  // "align=\n"
  return key.Add("align", std::string((kAlignment - header % kAlignment) % kAlignment, '.'));
}

/* nullptr and the image in `*image` when `file` holds exactly the image of `slots` for `key`;
 * else why not. */
const char* CheckEntry(const MappedFile& file, const backend::CacheKey& key,
                       const std::vector<RealignedSlot>& slots, uint64_t image_bytes,
                       const char** image) {
  backend::CacheEntryView view;
  backend::CacheEntryCheck check = backend::ParseCacheEntryFraming(file.data(), file.size(), &view);
  if (check != backend::CacheEntryCheck::kOk) return backend::CacheEntryCheckName(check);
  if (!backend::CacheEntryMatches(view, key)) return "made for another key";
  if (view.payload_size != image_bytes ||
      reinterpret_cast<uintptr_t>(view.payload) % kAlignment != 0) {
    return "inconsistent length";
  }
  // Every byte, against the model's own: a garbled entry or a hash collision is a miss.
  for (const RealignedSlot& s : slots) {
    if (std::memcmp(view.payload + s.offset, s.data, static_cast<size_t>(s.nbytes)) != 0) {
      return "its constants differ from the model's";
    }
  }
  *image = view.payload;
  return nullptr;
}

/* The valid entry for `key`, mapped; nullptr when there is none (counted as a miss unless
 * this is the second look, under the lock, of a load that missed already). */
std::shared_ptr<const StoredImage> MapEntry(const backend::PersistentCache& store,
                                            const backend::CacheKey& key,
                                            const std::vector<RealignedSlot>& slots,
                                            uint64_t image_bytes, bool second_look) {
  auto file = std::make_unique<MappedFile>(store.PathOf(key), MappedFile::Mode::kCopyOnWrite);
  if (!file->ok() && !file->empty()) {
    if (!second_look) store.Missed();
    return nullptr;
  }
  const char* image = nullptr;
  const char* problem =
      file->ok() ? CheckEntry(*file, key, slots, image_bytes, &image) : "truncated";
  if (problem != nullptr) {
    if (!second_look) store.Ignored(key, problem);
    return nullptr;
  }
  store.Hit(key);
  return std::make_shared<StoredImage>(std::move(file), image);
}

/* Writes the entry straight from the model into a temporary file, maps it, then renames it
 * into place; nullptr when it cannot be written. */
std::shared_ptr<const StoredImage> WriteEntry(const backend::PersistentCache& store,
                                              const backend::CacheKey& key,
                                              const std::vector<RealignedSlot>& slots,
                                              uint64_t image_bytes) {
  const size_t header_bytes = backend::kCacheEntryHeaderSize + key.description().size();
  std::string error;
  if (!store.Fits(header_bytes + image_bytes, &error)) {
    Fallback(store, error);
    return nullptr;
  }
  std::string tmp;
  int fd = store.disk().CreateTemporary(key.FileName(), &tmp, &error);
  if (fd < 0) {
    Fallback(store, error);
    return nullptr;
  }
  uint64_t at = 0;
  // Zeros up to `offset` (the slots are in order; the gap before one is under the alignment).
  auto pad_to = [&](uint64_t offset) {
    static const char kZeros[kAlignment] = {};
    size_t n = static_cast<size_t>(offset - at);
    at = offset;
    return backend::DiskCache::WriteAll(fd, kZeros, n);
  };
  bool ok = lseek(fd, static_cast<off_t>(header_bytes), SEEK_SET) >= 0;
  for (const RealignedSlot& s : slots) {
    ok = ok && pad_to(s.offset) &&
         backend::DiskCache::WriteAll(fd, s.data, static_cast<size_t>(s.nbytes));
    at += s.nbytes;
  }
  ok = ok && pad_to(image_bytes);
  // No checksum: every use compares each byte with the model's own (CheckEntry), which a CRC
  // pass would only repeat, at a third of the first load's time (measured on resnet10).
  std::string header = backend::EncodeCacheEntryHeader(key, image_bytes, /*payload_crc=*/0);
  ok = ok && pwrite(fd, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size());
  std::unique_ptr<MappedFile> file;
  if (ok) file = std::make_unique<MappedFile>(fd, MappedFile::Mode::kCopyOnWrite);
  if (!ok || !file->ok() || file->size() != header_bytes + image_bytes) {
    error = "cannot write " + tmp + ": " + std::strerror(errno);
    close(fd);
    std::remove(tmp.c_str());
    Fallback(store, error);
    return nullptr;
  }
  close(fd);
  // This process uses its own file even if renaming fails (it is then only unnamed).
  if (store.disk().Publish(tmp, key.FileName(), &error)) {
    store.Stored(key);
  } else {
    Fallback(store, error);
  }
  const char* image = file->data() + header_bytes;
  return std::make_shared<StoredImage>(std::move(file), image);
}

/* An exclusive lock on the store directory, held while one process writes an entry, so that
 * processes loading one model at once write it once; best effort (a directory that cannot
 * hold the lock file goes on without it), and never waits longer than kLockWait for a writer that
 * may be stuck. */
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir) {
    if (!backend::MakeDirectories(dir, nullptr)) return;
    fd_ = open((dir + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    auto deadline = std::chrono::steady_clock::now() + kLockWait;
    auto pause = std::chrono::microseconds(200);
    while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() > deadline) {
        return;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(20));
    }
  }
  ~DirectoryLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::shared_ptr<const StoredImage> MapRealignedImage(const Payload& payload,
                                                     const std::vector<RealignedSlot>& slots,
                                                     uint64_t image_bytes) {
  backend::PersistentCache store = WeightStore();
  if (!store.enabled() || image_bytes == 0 || image_bytes < MinImageBytes()) return nullptr;
  // The model's constants are read two or three times here (hash, then compare or write): their
  // pages stay resident until the end, not faulted in again for each pass.
  ReleaseWhenDone release{payload, slots};
  backend::CacheKey key = KeyOf(slots, image_bytes);
  if (auto hit = MapEntry(store, key, slots, image_bytes, false)) return hit;
  // Another process may have written the entry since, or be writing it now.
  DirectoryLock lock(store.policy().dir);
  if (auto hit = MapEntry(store, key, slots, image_bytes, true)) return hit;
  return WriteEntry(store, key, slots, image_bytes);
}

void RegisterWeightStoreInfo() { backend::RegisterCacheInfo("weights", WeightStore); }

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
