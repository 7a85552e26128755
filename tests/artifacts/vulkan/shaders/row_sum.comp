#version 450
// row_sum_kernel: B[64] = sum(A[64,256], axis=1). One row per workgroup of 64 invocations:
// each sums 4 strided elements, then a tree reduction in shared memory.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufB { float B[]; };
shared float partial[64];
void main() {
  uint row = gl_WorkGroupID.x, t = gl_LocalInvocationID.x;
  float s = 0.0;
  for (uint k = 0u; k < 4u; ++k) s += A[row * 256u + k * 64u + t];
  partial[t] = s;
  barrier();
  for (uint stride = 32u; stride > 0u; stride >>= 1u) {
    if (t < stride) partial[t] += partial[t + stride];
    barrier();
  }
  if (t == 0u) B[row] = partial[0];
}
