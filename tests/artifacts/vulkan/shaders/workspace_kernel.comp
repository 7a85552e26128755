#version 450
// workspace_kernel: T[512,1024] = outer(A[512], B[1024]) into a workspace buffer.
// Grid 8192 x workgroup 64: workgroup g covers row g / 16, columns (g % 16) * 64 ...
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufT { float T[]; };
void main() {
  uint g = gl_WorkGroupID.x, l = gl_LocalInvocationID.x;
  T[g * 64u + l] = A[g >> 4u] * B[(g & 15u) * 64u + l];
}
