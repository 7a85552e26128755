/*
 * What a persistent kernel cache stores: the key of an entry and the bytes of its file.
 *
 * A CacheKey is a short text that describes everything the cached bytes depend on (what they
 * are, the runtime version, the driver and device, the build options, a SHA-256 of the source),
 * one `name=value` line each; its SHA-256 names the file.  The entry repeats the description in
 * its header, so an entry is only ever used for exactly the key it was made for: a file that was
 * copied, renamed, written by another runtime or driver version, or edited is a miss.
 *
 * Entry file layout (little-endian):
 *    0  char[8]   magic "TVMRTCE\0"
 *    8  u32       format version (kCacheEntryVersion)
 *   12  u32       description length D
 *   16  u64       payload length P
 *   24  u32       CRC-32 of the payload (0 in the weight store's entries, whose reader compares
 *                 every payload byte with the model's own instead: see ParseCacheEntryFraming)
 *   28  u32       reserved, 0
 *   32  char[64]  key digest: lowercase hex SHA-256 of the description
 *   96  char[D]   description
 *   96+D u8[P]    payload (what the driver gets: a program binary, pipeline-cache data, a cubin)
 * The file is exactly 96 + D + P bytes; anything else (truncated, appended to, a flipped byte
 * anywhere) fails validation and is rebuilt, never handed to a driver.
 */
#ifndef TVM_RUNTIME_BACKEND_CACHE_CACHE_ENTRY_H_
#define TVM_RUNTIME_BACKEND_CACHE_CACHE_ENTRY_H_

#include <tvm_runtime/backend/detail/crc32.h>
#include <tvm_runtime/backend/detail/sha256.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace tvm_runtime {
namespace backend {

constexpr char kCacheEntryMagic[8] = {'T', 'V', 'M', 'R', 'T', 'C', 'E', '\0'};
constexpr uint32_t kCacheEntryVersion = 1;
constexpr size_t kCacheEntryHeaderSize = 96;
// A description is a handful of short lines; anything longer is not an entry of ours.
constexpr uint32_t kMaxCacheDescription = 64 * 1024;

class CacheKey {
 public:
  /* `kind` says what is cached, in which format: "opencl-program/1", "vulkan-pipeline/1". */
  explicit CacheKey(const std::string& kind) { description_ = "kind=" + Escape(kind) + "\n"; }

  /* Adds a line `name=value`; values may hold any bytes (newlines are escaped). */
  CacheKey& Add(const std::string& name, const std::string& value) {
    description_ += name + "=" + Escape(value) + "\n";
    digest_.clear();
    return *this;
  }

  /* Adds `name=<sha256 of the bytes>`: for sources, too long to repeat in every header. */
  CacheKey& AddContent(const std::string& name, const void* data, size_t n) {
    return Add(name + ".sha256", Sha256().Update(data, n).HexDigest());
  }
  CacheKey& AddContent(const std::string& name, const std::string& data) {
    return AddContent(name, data.data(), data.size());
  }

  const std::string& description() const { return description_; }

  /* Lowercase hex SHA-256 of the description (64 characters). */
  const std::string& digest() const {
    if (digest_.empty()) digest_ = Sha256::Hex(description_);
    return digest_;
  }

  /* The entry's file name inside the cache directory. */
  std::string FileName() const { return digest().substr(0, 40) + ".entry"; }

 private:
  static std::string Escape(const std::string& value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
      if (c == '\\') {
        out += "\\\\";
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out += c;
      }
    }
    return out;
  }

  std::string description_;
  mutable std::string digest_;
};

/* Why an entry was rejected (kOk: it was not). */
enum class CacheEntryCheck {
  kOk,
  kTruncated,       // shorter than its header says
  kBadMagic,        // not an entry file at all
  kBadVersion,      // written by an incompatible runtime
  kBadLength,       // longer than its header says, or absurd lengths
  kKeyMismatch,     // made for another key (source, options, driver, device or runtime version)
  kPayloadCorrupt,  // the payload's checksum does not match
};

inline const char* CacheEntryCheckName(CacheEntryCheck check) {
  switch (check) {
    case CacheEntryCheck::kOk:
      return "ok";
    case CacheEntryCheck::kTruncated:
      return "truncated";
    case CacheEntryCheck::kBadMagic:
      return "not a cache entry";
    case CacheEntryCheck::kBadVersion:
      return "unsupported entry version";
    case CacheEntryCheck::kBadLength:
      return "inconsistent length";
    case CacheEntryCheck::kKeyMismatch:
      return "made for another key";
    case CacheEntryCheck::kPayloadCorrupt:
      return "payload checksum mismatch";
  }
  return "unknown";
}

/* The parts of an entry file, pointing into the bytes it was parsed from. */
struct CacheEntryView {
  const char* digest = nullptr;  // 64 hex characters
  const char* description = nullptr;
  size_t description_size = 0;
  const char* payload = nullptr;
  size_t payload_size = 0;
};

namespace cache_entry_detail {

inline uint32_t Get32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

inline uint64_t Get64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

inline void Put32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

inline void Put64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace cache_entry_detail

/* The header and description of an entry for `key` whose payload has `payload_size` bytes with
 * CRC-32 `payload_crc`: the file is these bytes followed by the payload. */
inline std::string EncodeCacheEntryHeader(const CacheKey& key, uint64_t payload_size,
                                          uint32_t payload_crc) {
  using namespace cache_entry_detail;
  const std::string& description = key.description();
  std::string out;
  out.reserve(kCacheEntryHeaderSize + description.size());
  out.append(kCacheEntryMagic, sizeof(kCacheEntryMagic));
  Put32(&out, kCacheEntryVersion);
  Put32(&out, static_cast<uint32_t>(description.size()));
  Put64(&out, payload_size);
  Put32(&out, payload_crc);
  Put32(&out, 0);
  out += key.digest();
  out += description;
  return out;
}

/* The file bytes of an entry holding `payload` for `key`. */
inline std::string EncodeCacheEntry(const CacheKey& key, const std::string& payload) {
  std::string out =
      EncodeCacheEntryHeader(key, payload.size(), Crc32::Of(payload.data(), payload.size()));
  out += payload;
  return out;
}

/* Checks the framing of `size` bytes (any bytes: this is the parser of untrusted files) and
 * fills `view`, without reading the payload: for a caller that checks every payload byte
 * another way (the weight store compares them with the model's own). */
inline CacheEntryCheck ParseCacheEntryFraming(const char* data, size_t size, CacheEntryView* view) {
  using namespace cache_entry_detail;
  if (size < sizeof(kCacheEntryMagic) ||
      std::memcmp(data, kCacheEntryMagic, sizeof(kCacheEntryMagic)) != 0) {
    return CacheEntryCheck::kBadMagic;
  }
  if (size < kCacheEntryHeaderSize) return CacheEntryCheck::kTruncated;
  if (Get32(data + 8) != kCacheEntryVersion) return CacheEntryCheck::kBadVersion;
  const uint32_t description_size = Get32(data + 12);
  const uint64_t payload_size = Get64(data + 16);
  if (description_size > kMaxCacheDescription || Get32(data + 28) != 0) {
    return CacheEntryCheck::kBadLength;
  }
  const uint64_t body = size - kCacheEntryHeaderSize;
  if (description_size > body || payload_size > body - description_size) {
    return CacheEntryCheck::kTruncated;
  }
  if (payload_size != body - description_size) return CacheEntryCheck::kBadLength;
  view->digest = data + 32;
  view->description = data + kCacheEntryHeaderSize;
  view->description_size = description_size;
  view->payload = view->description + description_size;
  view->payload_size = static_cast<size_t>(payload_size);
  return CacheEntryCheck::kOk;
}

/* ParseCacheEntryFraming, and the payload's checksum. */
inline CacheEntryCheck ParseCacheEntry(const char* data, size_t size, CacheEntryView* view) {
  CacheEntryCheck check = ParseCacheEntryFraming(data, size, view);
  if (check != CacheEntryCheck::kOk) return check;
  if (Crc32::Of(view->payload, view->payload_size) != cache_entry_detail::Get32(data + 24)) {
    return CacheEntryCheck::kPayloadCorrupt;
  }
  return CacheEntryCheck::kOk;
}

/* Whether a parsed entry was made for `key`: its digest and its whole description match. */
inline bool CacheEntryMatches(const CacheEntryView& view, const CacheKey& key) {
  const std::string& description = key.description();
  return std::memcmp(view.digest, key.digest().data(), 64) == 0 &&
         view.description_size == description.size() &&
         std::memcmp(view.description, description.data(), description.size()) == 0;
}

/* The payload of `file` if it is a valid entry for `key`; otherwise why not. */
inline CacheEntryCheck DecodeCacheEntry(const std::string& file, const CacheKey& key,
                                        std::string* payload) {
  CacheEntryView view;
  CacheEntryCheck check = ParseCacheEntry(file.data(), file.size(), &view);
  if (check != CacheEntryCheck::kOk) return check;
  if (!CacheEntryMatches(view, key)) return CacheEntryCheck::kKeyMismatch;
  payload->assign(view.payload, view.payload_size);
  return CacheEntryCheck::kOk;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_CACHE_CACHE_ENTRY_H_
