#version 450
// matmul128_kernel: C = A @ B for 128x128 float32 (throughput benchmark). Workgroup 8x8, a 32x32
// tile of C per workgroup (4x4 accumulators per invocation), K in steps of 16 through shared
// memory; grid 4x4. The same tiling as the wgpu peer benchmark's shader.
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, set = 0, binding = 2) buffer BufC { float C[]; };
shared float As[512];
shared float Bs[512];
const uint N = 128u;
void main() {
  uint row0 = gl_WorkGroupID.y * 32u, col0 = gl_WorkGroupID.x * 32u;
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, t = ty * 8u + tx;
  float acc[16];
  for (uint i = 0u; i < 16u; ++i) acc[i] = 0.0;
  for (uint k0 = 0u; k0 < N; k0 += 16u) {
    for (uint e = 0u; e < 8u; ++e) {
      uint idx = e * 64u + t;
      As[idx] = A[(row0 + idx / 16u) * N + k0 + idx % 16u];
      Bs[idx] = B[(k0 + idx / 32u) * N + col0 + idx % 32u];
    }
    barrier();
    for (uint k = 0u; k < 16u; ++k) {
      for (uint i = 0u; i < 4u; ++i) {
        float av = As[(ty * 4u + i) * 16u + k];
        for (uint j = 0u; j < 4u; ++j) acc[i * 4u + j] += av * Bs[k * 32u + tx * 4u + j];
      }
    }
    barrier();
  }
  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 4u; ++j) C[(row0 + ty * 4u + i) * N + col0 + tx * 4u + j] = acc[i * 4u + j];
}
