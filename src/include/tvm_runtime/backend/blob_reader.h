/*
 * Bounds-checked little-endian reader for the payloads stored in `__tvm_ffi__library_bin`
 * (apache-tvm 0.27 serializer encoding: u64-length-prefixed strings and vectors, raw LE
 * scalars).  Every read checks the remaining size, so a truncated or corrupted blob becomes a
 * ValueError that names the module kind, never an out-of-bounds read.
 */
#ifndef TVM_RUNTIME_BACKEND_BLOB_READER_H_
#define TVM_RUNTIME_BACKEND_BLOB_READER_H_

#include <tvm_runtime/backend/error.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace backend {

class BlobReader {
 public:
  /* Errors read "Corrupted <what> module blob (...). <re-export advice>".  A format that is no
   * exported module (a params blob) passes its own noun ("params blob") and advice. */
  BlobReader(const char* data, size_t size, std::string what)
      : BlobReader(data, size, std::move(what) + " module blob",
                   "The artifact is truncated or was not written by apache-tvm 0.27's "
                   "export_library; re-export it.") {}
  BlobReader(const char* data, size_t size, std::string noun, std::string advice)
      : data_(data), size_(size), what_(std::move(noun)), advice_(std::move(advice)) {}

  /* Names the item being read (e.g. "tensor 'w1' (2 of 3)") in the errors that follow. */
  void SetItem(std::string item) { item_ = std::move(item); }

  size_t remaining() const { return size_ - pos_; }
  size_t position() const { return pos_; }

  template <typename T>
  T Read() {
    static_assert(std::is_trivially_copyable<T>::value, "POD only");
    Require(sizeof(T), "a scalar");
    T value;
    std::memcpy(&value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  /* Copies the next `n` raw bytes to `dst` (one bounds check, one memcpy: bulk tensor data). */
  void ReadBytes(void* dst, size_t n) {
    Require(n, "raw bytes");
    if (n != 0) std::memcpy(dst, data_ + pos_, n);
    pos_ += n;
  }

  /* Steps over the next `n` bytes without reading them (a payload another parser reads). */
  void Skip(size_t n) {
    Require(n, "skipped bytes");
    pos_ += n;
  }

  std::string ReadString() {
    uint64_t n = ReadCount(1, "a string");
    std::string out(data_ + pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }

  /* Reads a u64 element count and checks that `n * min_elem_bytes` bytes can follow, so a
   * corrupted count can never trigger a huge allocation. */
  uint64_t ReadCount(size_t min_elem_bytes, const char* field) {
    uint64_t n = Read<uint64_t>();
    if (min_elem_bytes != 0 && n > remaining() / min_elem_bytes) {
      Fail(std::string("length of ") + field + " (" + std::to_string(n) +
           ") exceeds the remaining " + std::to_string(remaining()) + " bytes");
    }
    return n;
  }

  template <typename T>
  std::vector<T> ReadVector() {
    uint64_t n = ReadCount(sizeof(T), "a vector");
    std::vector<T> out(static_cast<size_t>(n));
    if (n != 0) std::memcpy(out.data(), data_ + pos_, n * sizeof(T));
    pos_ += static_cast<size_t>(n * sizeof(T));
    return out;
  }

  std::vector<std::string> ReadStringVector() {
    uint64_t n = ReadCount(sizeof(uint64_t), "a string list");
    std::vector<std::string> out;
    out.reserve(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i) out.push_back(ReadString());
    return out;
  }

  /* Call after the last field: trailing bytes mean the format is not what we think it is. */
  void ExpectEnd() {
    if (pos_ != size_) {
      Fail(std::to_string(size_ - pos_) + " unexpected trailing bytes");
    }
  }

  [[noreturn]] void Fail(const std::string& why) const {
    ThrowError("ValueError", "Corrupted " + what_ + " (" + (item_.empty() ? "" : item_ + ": ") +
                                 why + " at byte " + std::to_string(pos_) + " of " +
                                 std::to_string(size_) + "). " + advice_);
  }

 private:
  void Require(size_t n, const char* field) const {
    if (n > remaining()) {
      Fail(std::string("need ") + std::to_string(n) + " bytes for " + field + ", have " +
           std::to_string(remaining()));
    }
  }

  const char* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string what_;
  std::string advice_;
  std::string item_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_BLOB_READER_H_
