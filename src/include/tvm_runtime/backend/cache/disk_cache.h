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
    std::string tmp;
    int fd = CreateTemporary(name, &tmp, error);
    if (fd < 0) return false;
    bool ok = WriteAll(fd, data.data(), data.size());
    ok = (close(fd) == 0) && ok;
    if (!ok) {
      if (error) *error = "cannot write " + tmp + ": " + std::strerror(errno);
      std::remove(tmp.c_str());
      return false;
    }
    return Publish(tmp, name, error);
  }

  /* A new file, open for reading and writing, that becomes the entry `name` once Publish()ed
   * (entries too large to build in memory are written through it piece by piece); its path in
   * `*tmp`.  -1 with the reason in `*error` when the directory cannot be written. */
  int CreateTemporary(const std::string& name, std::string* tmp, std::string* error) const {
    if (!MakeDirectories(dir_, error)) return -1;
    // Unique per process and call, so concurrent writers never share a temporary file.
    static int counter = 0;
    *tmp = PathOf(name) + ".tmp." + std::to_string(static_cast<long>(getpid())) + "." +
           std::to_string(__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
    int fd = open(tmp->c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && error) *error = "cannot create " + *tmp + ": " + std::strerror(errno);
    return fd;
  }

  /* Renames a complete temporary file into place as the entry `name` (deletes it on failure). */
  bool Publish(const std::string& tmp, const std::string& name, std::string* error) const {
    if (std::rename(tmp.c_str(), PathOf(name).c_str()) == 0) return true;
    if (error) *error = "cannot write " + PathOf(name) + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }

  /* write(2) until all `n` bytes are out; false on an error. */
  static bool WriteAll(int fd, const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t done = write(fd, p, n);
      if (done < 0 && errno == EINTR) continue;
      if (done <= 0) return false;
      p += done;
      n -= static_cast<size_t>(done);
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
