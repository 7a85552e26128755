#include "opencl_precompiled.h"

#include <tvm_runtime/backend/error.h>

#include <cstdint>

namespace tvm_runtime {
namespace opencl {

namespace {

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}

  uint64_t U64(const char* field) {
    Require(8, field);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes_[pos_ + i]);
    pos_ += 8;
    return v;
  }

  std::string Bytes(const char* field) {
    uint64_t n = U64(field);
    Require(n, field);
    std::string out = bytes_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }

  size_t remaining() const { return bytes_.size() - pos_; }

  [[noreturn]] void Fail(const std::string& why) const {
    backend::ThrowError(
        "ValueError", "opencl.SetPreCompiledPrograms: " + why + " at byte " + std::to_string(pos_) +
                          " of " + std::to_string(bytes_.size()) +
                          ". Pass the bytes opencl.GetPreCompiledPrograms returned, unchanged.");
  }

 private:
  void Require(uint64_t n, const char* field) const {
    if (n > remaining()) {
      Fail(std::string("truncated ") + field + " (needs " + std::to_string(n) + " bytes, " +
           std::to_string(remaining()) + " left)");
    }
  }

  const std::string& bytes_;
  size_t pos_ = 0;
};

}  // namespace

std::string EncodePreCompiledPrograms(const PreCompiledPrograms& programs) {
  std::string out;
  PutU64(&out, programs.size());
  for (const auto& p : programs) {
    PutU64(&out, p.first.size());
    out += p.first;
    PutU64(&out, p.second.size());
    out += p.second;
  }
  return out;
}

PreCompiledPrograms DecodePreCompiledPrograms(const std::string& bytes) {
  Reader in(bytes);
  uint64_t count = in.U64("kernel count");
  // Each kernel takes at least its two lengths: a larger count is not a count.
  if (count > in.remaining() / 16) {
    in.Fail("a kernel count of " + std::to_string(count) + " does not fit the remaining bytes");
  }
  PreCompiledPrograms out;
  for (uint64_t i = 0; i < count; ++i) {
    std::string name = in.Bytes("kernel name");
    std::string binary = in.Bytes("program binary");
    out.emplace_back(std::move(name), std::move(binary));
  }
  if (in.remaining() != 0) in.Fail(std::to_string(in.remaining()) + " trailing bytes");
  return out;
}

}  // namespace opencl
}  // namespace tvm_runtime
