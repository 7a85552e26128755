/*
 * float -> IEEE half / bfloat16 bit patterns, round to nearest even.  Used to fill fp16/bf16
 * tensors with random values in [1, 10), so only finite values occur; overflow still saturates to
 * infinity and tiny values flush to zero (never produced here, handled for safety).
 */
#ifndef TVM_RUNTIME_EXTRA_HALF_BITS_H_
#define TVM_RUNTIME_EXTRA_HALF_BITS_H_

#include <cstdint>
#include <cstring>

namespace tvm_runtime {
namespace extra {

inline uint16_t FloatToHalfBits(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof(f));
  uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  int32_t exponent = static_cast<int32_t>((f >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = f & 0x7FFFFFu;
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7C00u);
  if (exponent <= 0) return sign;
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
}

inline uint16_t FloatToBfloat16Bits(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof(f));
  f += 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<uint16_t>(f >> 16);
}

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_HALF_BITS_H_
