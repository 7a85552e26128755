/*
 * CRC-32 (the IEEE 802.3 polynomial, reflected: the checksum of zlib, PNG and Python's
 * zlib.crc32), for the payload of an on-disk cache entry.  A cache hit checks every byte it is
 * about to hand to a driver, so the checksum must cost far less than the load it guards:
 * slicing-by-8 runs at gigabytes per second, where SHA-256 would add milliseconds to a model's
 * first call.  It detects corruption (torn or flipped bytes), not tampering.
 */
#ifndef TVM_RUNTIME_BACKEND_DETAIL_CRC32_H_
#define TVM_RUNTIME_BACKEND_DETAIL_CRC32_H_

#include <cstddef>
#include <cstdint>

namespace tvm_runtime {
namespace backend {

class Crc32 {
 public:
  /* The CRC-32 of `n` bytes, continuing from `crc` (the result of an earlier call, or 0). */
  static uint32_t Of(const void* data, size_t n, uint32_t crc = 0) {
    const Tables& t = GetTables();
    const auto* p = static_cast<const uint8_t*>(data);
    crc = ~crc;
    while (n >= 8) {
      uint32_t one = Load32(p) ^ crc;
      uint32_t two = Load32(p + 4);
      crc = t.v[7][one & 0xFF] ^ t.v[6][(one >> 8) & 0xFF] ^ t.v[5][(one >> 16) & 0xFF] ^
            t.v[4][one >> 24] ^ t.v[3][two & 0xFF] ^ t.v[2][(two >> 8) & 0xFF] ^
            t.v[1][(two >> 16) & 0xFF] ^ t.v[0][two >> 24];
      p += 8;
      n -= 8;
    }
    while (n-- > 0) crc = t.v[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
  }

 private:
  struct Tables {
    uint32_t v[8][256];
  };

  static uint32_t Load32(const uint8_t* p) {
    return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
  }

  static const Tables& GetTables() {
    static const Tables tables = [] {
      Tables t{};
      for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        t.v[0][i] = c;
      }
      // Table k advances a byte through k further zero bytes, so 8 bytes fold in one step.
      for (uint32_t i = 0; i < 256; ++i) {
        for (int k = 1; k < 8; ++k) t.v[k][i] = (t.v[k - 1][i] >> 8) ^ t.v[0][t.v[k - 1][i] & 0xFF];
      }
      return t;
    }();
    return tables;
  }
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_DETAIL_CRC32_H_
