/*
 * IEEE half-precision <-> float for the fakes that compute on float16 data (cuBLASLt, cuDNN,
 * NCCL): subnormals kept, round to nearest even.
 */
#ifndef TVM_RUNTIME_TESTS_FAKES_FAKE_HALF_H_
#define TVM_RUNTIME_TESTS_FAKES_FAKE_HALF_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

static __attribute__((unused)) float HalfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    float v = ldexpf((float)man, -24);
    return sign ? -v : v;
  }
  bits = sign | (exp == 31 ? 0x7f800000u | (man << 13) : ((exp + 112) << 23) | (man << 13));
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static __attribute__((unused)) uint16_t FloatToHalf(float f) {
  /* Round to nearest even through the float32 bits. */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int exp = (int)((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (exp >= 31) return (uint16_t)(sign | 0x7c00);
  if (exp <= 0) {
    float a = fabsf(f);
    return (uint16_t)(sign | (uint32_t)lrintf(a * 16777216.0f));  // subnormal: units of 2^-24
  }
  uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13);
  uint32_t rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
  return (uint16_t)h;
}

#endif  // TVM_RUNTIME_TESTS_FAKES_FAKE_HALF_H_
