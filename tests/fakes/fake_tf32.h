/*
 * What a TF32 tensor core does to a float32 operand, for the fake cuBLASLt and cuDNN: keep the
 * 8-bit exponent and round the mantissa to 10 bits (to nearest, ties to even).  A fake that
 * "runs on TF32" multiplies rounded operands, so its results differ from numpy's by TF32-sized
 * errors and the tests' tolerances must follow the TF32 policy, as on a GPU.
 *
 * Like the real libraries, NVIDIA_TF32_OVERRIDE=0 disables TF32 whatever was asked for.
 */
#ifndef TVM_RUNTIME_TESTS_CUDA_FAKE_TF32_H_
#define TVM_RUNTIME_TESTS_CUDA_FAKE_TF32_H_

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double FakeTf32Round(double v) {
  float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) != 0x7f800000u) { /* not inf/nan */
    bits += 0xfffu + ((bits >> 13) & 1u);
    bits &= 0xffffe000u;
  }
  memcpy(&f, &bits, 4);
  return f;
}

/* Whether NVIDIA_TF32_OVERRIDE leaves TF32 enabled. */
static int FakeTf32Enabled(void) {
  const char* v = getenv("NVIDIA_TF32_OVERRIDE");
  return v == NULL || strcmp(v, "0") != 0;
}

#endif  // TVM_RUNTIME_TESTS_CUDA_FAKE_TF32_H_
