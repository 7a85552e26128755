/*
 * A tensor cache shard opened for reading records straight into their destination: a record
 * that needs its own CPU memory (widened, or misaligned without the weight store) receives its
 * bytes with one pread (no whole-shard buffer, no extra copy); the others are mapped from this
 * descriptor (tensor_cache_shard_map.h).
 */
#ifndef TVM_RUNTIME_CORE_LM_TENSOR_CACHE_SHARD_FILE_H_
#define TVM_RUNTIME_CORE_LM_TENSOR_CACHE_SHARD_FILE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <tvm_runtime/backend/error.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace tvm_runtime {
namespace core {
namespace lm {

class ShardFile {
 public:
  /* Opens `path`; `how_to_fix` ends every error message. */
  ShardFile(std::string path, std::string how_to_fix)
      : path_(std::move(path)), how_to_fix_(std::move(how_to_fix)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd_ < 0 || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      Fail("cannot read tensor cache shard '" + path_ + "' (missing or unreadable)");
    }
    size_ = static_cast<int64_t>(st.st_size);
  }
  ~ShardFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ShardFile(const ShardFile&) = delete;
  ShardFile& operator=(const ShardFile&) = delete;

  int64_t size() const { return size_; }
  /* The open descriptor (to map the file: tensor_cache_shard_map.h). */
  int fd() const { return fd_; }

  /* Exactly `nbytes` bytes at `offset` into `dst`. */
  void ReadAt(void* dst, int64_t nbytes, int64_t offset) const {
    char* out = static_cast<char*>(dst);
    while (nbytes > 0) {
      ssize_t n = ::pread(fd_, out, static_cast<size_t>(nbytes), static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        Fail("reading tensor cache shard '" + path_ + "' failed at byte " + std::to_string(offset) +
             (n < 0 ? std::string(": ") + std::strerror(errno) : ""));
      }
      out += n;
      offset += n;
      nbytes -= n;
    }
  }

  [[noreturn]] void Fail(const std::string& what) const {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    backend::ThrowError("ValueError", what + how_to_fix_);
  }

 private:
  std::string path_;
  std::string how_to_fix_;
  mutable int fd_ = -1;
  int64_t size_ = 0;
};

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_TENSOR_CACHE_SHARD_FILE_H_
