#version 450
// matmul_kernel: C[64,48] = A[64,32] @ B[32,48] (float32). 16x16 workgroups, each computing a
// 16x16 tile of C; A and B are staged through shared memory 16 columns of K at a time.
// Launch tags blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x: grid (x=3, y=4).
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC { float C[]; };
shared float As[16][16];
shared float Bs[16][16];
const uint K = 32u;
const uint N = 48u;
void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint row = gl_WorkGroupID.y * 16u + ty, col = gl_WorkGroupID.x * 16u + tx;
  float acc = 0.0;
  for (uint k0 = 0u; k0 < K; k0 += 16u) {
    As[ty][tx] = A[row * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col];
    barrier();
    for (uint k = 0u; k < 16u; ++k) acc += As[ty][k] * Bs[k][tx];
    barrier();
  }
  C[row * N + col] = acc;
}
