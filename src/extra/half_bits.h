/*
 * IEEE half and bfloat16 <-> float conversions, round to nearest even, with subnormals,
 * infinities and NaN handled.  The random functions fill fp16/bf16 tensors through them, and the
 * Disco cpu collectives reduce fp16/bf16 tensors in float32 through them.
 */
#ifndef TVM_RUNTIME_EXTRA_HALF_BITS_H_
#define TVM_RUNTIME_EXTRA_HALF_BITS_H_

#include <cstdint>
#include <cstring>

namespace tvm_runtime {
namespace extra {

inline float BitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline uint32_t FloatBits(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof(f));
  return f;
}

inline uint16_t FloatToHalfBits(float value) {
  uint32_t f = FloatBits(value);
  uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  uint32_t abs = f & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);   // NaN stays NaN
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to infinity
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): add 0.5 in float so the FPU rounds the mantissa for us.
    float shifted = BitsToFloat(abs) + 0.5f;
    return static_cast<uint16_t>(sign | (FloatBits(shifted) - 0x3F000000u));
  }
  uint32_t mantissa_odd = (abs >> 13) & 1u;
  abs += 0xC8000FFFu + mantissa_odd;  // re-bias the exponent (-112 << 23) and round to even
  return static_cast<uint16_t>(sign | (abs >> 13));
}

inline float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) return BitsToFloat(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = static_cast<float>(mantissa) * BitsToFloat(0x33800000u);
    return BitsToFloat(sign | FloatBits(magnitude));
  }
  return BitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline uint16_t FloatToBfloat16Bits(float value) {
  uint32_t f = FloatBits(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // NaN
  f += 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<uint16_t>(f >> 16);
}

inline float Bfloat16BitsToFloat(uint16_t b) { return BitsToFloat(static_cast<uint32_t>(b) << 16); }

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_HALF_BITS_H_
