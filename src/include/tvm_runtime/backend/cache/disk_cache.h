/*
 * A directory of immutable, content-addressed files (compiled kernels, extracted headers).
 *
 * Several processes may fill the same cache at once, so an entry is written to a unique
 * temporary file and then rename()d into place: readers see either no entry or a complete one,
 * never a torn write.  Two processes that race on one key both compile and the last rename
 * wins, which is harmless because both wrote the same bytes.  The cache is an optimisation
 * only: every failure to read or write it is reported to the caller, never thrown.
 */
#ifndef TVM_RUNTIME_BACKEND_CACHE_DISK_CACHE_H_
#define TVM_RUNTIME_BACKEND_CACHE_DISK_CACHE_H_

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace tvm_runtime {
namespace backend {

/* `mkdir -p`; true when `path` is a directory afterwards. */
inline bool MakeDirectories(const std::string& path, std::string* error) {
  if (path.empty()) {
    if (error) *error = "empty directory path";
    return false;
  }
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      if (error) *error = "cannot create " + partial + ": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    if (error) *error = path + " is not a directory";
    return false;
  }
  return true;
}

/* The cache root for `subdir` (e.g. "tvm-runtime/cuda"): `$env_var` if set and non-empty, else
 * `$XDG_CACHE_HOME/<subdir>`, else `$HOME/.cache/<subdir>`, else a per-user temp directory. */
inline std::string DefaultCacheRoot(const char* env_var, const std::string& subdir) {
  const char* value = std::getenv(env_var);
  if (value != nullptr && value[0] != '\0') return value;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/" + subdir;
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/" + subdir;
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && tmp[0] == '/') ? tmp : "/tmp";
  return base + "/" + subdir + "-" + std::to_string(static_cast<long>(getuid()));
}

class DiskCache {
 public:
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

  /* True and the whole file in `*out` when the entry exists and can be read. */
  bool Read(const std::string& name, std::string* out) const {
    int fd = open(PathOf(name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (ok) {
      // One read into a buffer of the file's size: entries are read on every first call.
      out->resize(static_cast<size_t>(st.st_size));
      size_t done = 0;
      while (ok && done < out->size()) {
        ssize_t n = read(fd, &(*out)[done], out->size() - done);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        if (ok) done += static_cast<size_t>(n);
      }
    }
    close(fd);
    return ok;
  }

  /* Atomically creates or replaces the entry; false with the reason in `*error` otherwise. */
  bool Write(const std::string& name, const std::string& data, std::string* error) const {
    if (!MakeDirectories(dir_, error)) return false;
    std::string final_path = PathOf(name);
    // Unique per process and call, so concurrent writers never share a temporary file.
    static int counter = 0;
    std::string tmp = final_path + ".tmp." + std::to_string(static_cast<long>(getpid())) + "." +
                      std::to_string(__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr) {
      if (error) *error = "cannot create " + tmp + ": " + std::strerror(errno);
      return false;
    }
    bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
    ok = (std::fflush(f) == 0) && ok;
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), final_path.c_str()) != 0) {
      if (error) *error = "cannot write " + final_path + ": " + std::strerror(errno);
      std::remove(tmp.c_str());
      return false;
    }
    return true;
  }

  /* Drops an entry that turned out to be unusable (e.g. a binary the driver rejects). */
  void Remove(const std::string& name) const { std::remove(PathOf(name).c_str()); }

 private:
  std::string dir_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_CACHE_DISK_CACHE_H_
