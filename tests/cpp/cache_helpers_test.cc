// The persistent kernel cache's helpers (tvm_runtime/backend/cache/*.h, detail/crc32.h
// of the installed core wheel): the checksum, the key, the entry format against every kind of
// damage, and the directory policy (atomic store, least-recently-used eviction, stale files).
#include <dirent.h>
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <tvm_runtime/backend/cache/cache_entry.h>
#include <tvm_runtime/backend/cache/persistent_cache.h>
#include <tvm_runtime/backend/detail/crc32.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

using tvm_runtime::backend::CacheEntryCheck;
using tvm_runtime::backend::CacheEntryView;
using tvm_runtime::backend::CacheKey;
using tvm_runtime::backend::CachePolicy;
using tvm_runtime::backend::CacheStats;
using tvm_runtime::backend::Crc32;
using tvm_runtime::backend::DecodeCacheEntry;
using tvm_runtime::backend::EncodeCacheEntry;
using tvm_runtime::backend::ParseByteSize;
using tvm_runtime::backend::ParseCacheEntry;
using tvm_runtime::backend::PersistentCache;

CacheKey TestKey(const std::string& source, const std::string& driver = "PoCL 3.1") {
  CacheKey key("test-program/1");
  key.Add("driver_version", driver).AddContent("source", source);
  return key;
}

// A fresh directory under $TMPDIR, removed with its files at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/tvmrt-cache-XXXXXX";
    path = mkdtemp(&pattern[0]);
  }
  ~TempDir() { RemoveTree(path); }

  static void RemoveTree(const std::string& dir) {
    if (DIR* d = opendir(dir.c_str())) {
      while (struct dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string path = dir + "/" + name;
        struct stat st;
        if (lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
          RemoveTree(path);
        } else {
          std::remove(path.c_str());
        }
      }
      closedir(d);
    }
    rmdir(dir.c_str());
  }
};

void SetMtime(const std::string& path, time_t seconds) {
  struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

TEST_CASE("Crc32 is zlib's CRC-32, whatever the alignment and split") {
  CHECK(Crc32::Of("123456789", 9) == 0xCBF43926u);  // the standard check value
  CHECK(Crc32::Of("", 0) == 0u);
  std::string text = "The quick brown fox jumps over the lazy dog";
  CHECK(Crc32::Of(text.data(), text.size()) == 0x414FA339u);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    uint32_t first = Crc32::Of(text.data(), cut);
    CHECK(Crc32::Of(text.data() + cut, text.size() - cut, first) == 0x414FA339u);
  }
}

TEST_CASE("CacheKey: a description of every input, escaped, named by its digest") {
  CacheKey key = TestKey("kernel void f() {}");
  CHECK(key.description().rfind("kind=test-program/1\ndriver_version=PoCL 3.1\nsource.sha256=",
                                0) == 0);
  CHECK(key.digest().size() == 64);
  CHECK(key.FileName() == key.digest().substr(0, 40) + ".entry");
  CHECK(TestKey("kernel void f() {}").digest() == key.digest());
  CHECK(TestKey("kernel void g() {}").digest() != key.digest());
  CHECK(TestKey("kernel void f() {}", "PoCL 3.2").digest() != key.digest());
  // A value cannot forge a line of its own.
  CacheKey forged("k");
  forged.Add("a", "1\nb=2");
  CacheKey honest("k");
  honest.Add("a", "1").Add("b", "2");
  CHECK(forged.description() == "kind=k\na=1\\nb=2\n");
  CHECK(forged.digest() != honest.digest());
}

TEST_CASE("Cache entries round-trip and reject every kind of damage") {
  CacheKey key = TestKey("source");
  std::string payload(300, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7);
  std::string file = EncodeCacheEntry(key, payload);
  CHECK(file.size() == 96 + key.description().size() + payload.size());
  std::string back;
  REQUIRE(DecodeCacheEntry(file, key, &back) == CacheEntryCheck::kOk);
  CHECK(back == payload);

  SUBCASE("every truncation") {
    for (size_t n = 0; n < file.size(); ++n) {
      CHECK(DecodeCacheEntry(file.substr(0, n), key, &back) != CacheEntryCheck::kOk);
    }
  }
  SUBCASE("every flipped byte") {
    for (size_t i = 0; i < file.size(); ++i) {
      std::string damaged = file;
      damaged[i] = static_cast<char>(damaged[i] ^ 0x10);
      CHECK(DecodeCacheEntry(damaged, key, &back) != CacheEntryCheck::kOk);
    }
  }
  SUBCASE("appended bytes, another key, another format") {
    CHECK(DecodeCacheEntry(file + "x", key, &back) == CacheEntryCheck::kBadLength);
    CHECK(DecodeCacheEntry(file, TestKey("other source"), &back) == CacheEntryCheck::kKeyMismatch);
    CHECK(DecodeCacheEntry(file, TestKey("source", "other driver"), &back) ==
          CacheEntryCheck::kKeyMismatch);
    CHECK(DecodeCacheEntry("\x7f"
                           "ELF....",
                           key, &back) == CacheEntryCheck::kBadMagic);
    std::string v2 = file;
    v2[8] = 2;
    CHECK(DecodeCacheEntry(v2, key, &back) == CacheEntryCheck::kBadVersion);
  }
  SUBCASE("lengths that would overflow") {
    std::string huge = file;
    for (int i = 16; i < 24; ++i) huge[i] = '\xff';
    CacheEntryView view;
    CHECK(ParseCacheEntry(huge.data(), huge.size(), &view) == CacheEntryCheck::kTruncated);
  }
}

TEST_CASE("ParseByteSize reads plain bytes and K/M/G suffixes") {
  uint64_t v = 0;
  CHECK((ParseByteSize("100000", &v) && v == 100000));
  CHECK((ParseByteSize("64k", &v) && v == 64 * 1024));
  CHECK((ParseByteSize("512M", &v) && v == 512ull << 20));
  CHECK((ParseByteSize("2GB", &v) && v == 2ull << 30));
  for (const char* bad : {"", "M", "-1", "1T", "12MBs", "1 G", "99999999999999999999G"}) {
    CHECK_MESSAGE(!ParseByteSize(bad, &v), bad);
  }
  CHECK(!ParseByteSize(nullptr, &v));
}

TEST_CASE("PersistentCache: store, hit, self-healing and least-recently-used eviction") {
  TempDir tmp;
  CacheStats stats;
  CachePolicy policy;
  policy.env_prefix = "TVM_TEST_CACHE";
  policy.dir = tmp.path + "/entries";
  policy.max_bytes = 3 * (96 + TestKey("a").description().size() + 1000) + 10;
  PersistentCache cache(policy, &stats);
  const std::string payload(1000, 'p');

  std::string got;
  CHECK(!cache.Load(TestKey("a"), &got));
  REQUIRE(cache.Store(TestKey("a"), payload));
  CHECK((cache.Load(TestKey("a"), &got) && got == payload));
  CHECK(stats.hits == 1);
  CHECK(stats.misses == 1);

  SUBCASE("a damaged entry is a miss, and the next store replaces it") {
    std::ofstream(cache.PathOf(TestKey("a")), std::ios::binary | std::ios::trunc) << "garbage";
    CHECK(!cache.Load(TestKey("a"), &got));
    CHECK(stats.rejected == 1);
    CHECK(stats.last_problem().find("not a cache entry") != std::string::npos);
    REQUIRE(cache.Store(TestKey("a"), payload));
    CHECK(cache.Load(TestKey("a"), &got));
  }
  SUBCASE("a payload check can reject a sound entry") {
    CHECK(!cache.Load(TestKey("a"), &got, [](const std::string&) { return "foreign device"; }));
    CHECK(stats.rejected == 1);
  }
  SUBCASE("the least recently used entries go first") {
    REQUIRE(cache.Store(TestKey("b"), payload));
    REQUIRE(cache.Store(TestKey("c"), payload));
    SetMtime(cache.PathOf(TestKey("a")), 1000);
    SetMtime(cache.PathOf(TestKey("b")), 2000);
    SetMtime(cache.PathOf(TestKey("c")), 3000);
    CHECK(cache.Load(TestKey("a"), &got));  // a hit makes "a" the most recent
    REQUIRE(cache.Store(TestKey("d"), payload));
    CHECK(Exists(cache.PathOf(TestKey("a"))));
    CHECK(!Exists(cache.PathOf(TestKey("b"))));
    CHECK(Exists(cache.PathOf(TestKey("c"))));
    CHECK(Exists(cache.PathOf(TestKey("d"))));
    CHECK(stats.evicted == 1);
    CHECK(cache.Usage().entries == 3);
    CHECK(cache.Usage().bytes <= policy.max_bytes);
  }
  SUBCASE("an entry larger than the whole cache is not stored") {
    CHECK(!cache.Store(TestKey("big"), std::string(policy.max_bytes, 'x')));
    CHECK(stats.store_failures == 1);
    CHECK(!Exists(cache.PathOf(TestKey("big"))));
  }
  SUBCASE("stale temporary files are swept, fresh ones kept, other files never touched") {
    std::string stale = cache.PathOf(TestKey("x")) + ".tmp.1.0";
    std::string fresh = cache.PathOf(TestKey("y")) + ".tmp.2.0";
    std::string other = policy.dir + "/README";
    for (const std::string& p : {stale, fresh, other}) std::ofstream(p) << "data";
    SetMtime(stale, 1000);
    REQUIRE(cache.Store(TestKey("b"), payload));
    CHECK(!Exists(stale));
    CHECK(Exists(fresh));
    CHECK(Exists(other));
  }
  SUBCASE("disabled: nothing is read or written") {
    policy.enabled = false;
    PersistentCache off(policy, &stats);
    CHECK(!off.Load(TestKey("a"), &got));
    CHECK(!off.Store(TestKey("e"), payload));
    CHECK(!Exists(off.PathOf(TestKey("e"))));
  }
}

TEST_CASE("CachePolicy reads the prefix's variables") {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_xdg = xdg != nullptr ? xdg : "";
  setenv("TVM_UNIT_CACHE_DIR", "/somewhere/cache", 1);
  setenv("TVM_UNIT_CACHE_MAX_SIZE", "64M", 1);
  setenv("TVM_UNIT_CACHE_DISABLE", "1", 1);
  CachePolicy p = CachePolicy::FromEnvironment("TVM_UNIT_CACHE", "tvm-runtime/unit", "kernels");
  CHECK(p.root == "/somewhere/cache");
  CHECK(p.dir == "/somewhere/cache/kernels");
  CHECK(p.max_bytes == 64ull << 20);
  CHECK(!p.enabled);
  unsetenv("TVM_UNIT_CACHE_DIR");
  unsetenv("TVM_UNIT_CACHE_MAX_SIZE");
  unsetenv("TVM_UNIT_CACHE_DISABLE");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  p = CachePolicy::FromEnvironment("TVM_UNIT_CACHE", "tvm-runtime/unit");
  CHECK(p.dir == "/xdg/tvm-runtime/unit");
  CHECK(p.enabled);
  CHECK(p.max_bytes == tvm_runtime::backend::kDefaultCacheMaxBytes);
  if (xdg != nullptr) {
    setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  } else {
    unsetenv("XDG_CACHE_HOME");
  }
}
