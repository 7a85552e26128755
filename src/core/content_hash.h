/*
 * A fast 64-bit hash of large byte ranges (a model's weights), for finding a weight-store entry.
 *
 * It only names the entry: the store compares every byte of an entry with the model's own
 * before using it, so a collision (accidental or crafted) costs a miss, never a wrong weight.
 * What it must be is fast: it reads every weight byte on every load, so it runs four
 * independent multiply-rotate lanes over 32-byte stripes (several gigabytes per second, about
 * what reading the bytes costs), where SHA-256 would cost seconds for a large model.
 */
#ifndef TVM_RUNTIME_CORE_CONTENT_HASH_H_
#define TVM_RUNTIME_CORE_CONTENT_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tvm_runtime {
namespace core {

class ContentHash {
 public:
  /* Adds `n` bytes; feeding a range in pieces gives the hash of the pieces, not of the whole
   * range (callers hash whole tensors, in a fixed order). */
  ContentHash& Update(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t lane[4] = {state_ ^ kMul1, state_ + kMul2, state_ - kMul1, ~state_};
    size_t stripes = n / 32;
    for (size_t s = 0; s < stripes; ++s, p += 32) {
      for (int i = 0; i < 4; ++i) lane[i] = Round(lane[i], Load64(p + 8 * i));
    }
    uint64_t h = Rotl(lane[0], 1) + Rotl(lane[1], 7) + Rotl(lane[2], 12) + Rotl(lane[3], 18);
    for (size_t left = n % 32; left >= 8; left -= 8, p += 8) h = Round(h, Load64(p));
    uint64_t tail = 0;
    std::memcpy(&tail, p, n % 8);
    state_ = Mix(Round(h, tail) ^ (n * kMul2));
    return *this;
  }

  uint64_t value() const { return state_; }

 private:
  static constexpr uint64_t kMul1 = 0x9E3779B97F4A7C15ULL;  // 2^64 / golden ratio
  static constexpr uint64_t kMul2 = 0xC2B2AE3D27D4EB4FULL;

  static uint64_t Rotl(uint64_t v, int r) { return (v << r) | (v >> (64 - r)); }
  static uint64_t Round(uint64_t acc, uint64_t word) {
    return Rotl(acc + word * kMul2, 31) * kMul1;
  }
  // Spreads every input bit over the whole output (a 64-bit finalizer).
  static uint64_t Mix(uint64_t v) {
    v ^= v >> 33;
    v *= 0xFF51AFD7ED558CCDULL;
    v ^= v >> 33;
    v *= 0xC4CEB9FE1A85EC53ULL;
    return v ^ (v >> 33);
  }
  static uint64_t Load64(const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));  // the machine's byte order: the key includes the runtime
    return v;
  }

  uint64_t state_ = 0x27D4EB2F165667C5ULL;
};

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_CONTENT_HASH_H_
