#version 450
// dyn_muladd_kernel: C[i] = A[i] * B[i] + 1 for i < n; n is an int32 scalar in push constants
// (8-byte slot 0, as apache-tvm packs scalars). Grid ceil(n / 64).
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC { float c[]; };
layout(push_constant) uniform Args { layout(offset = 0) int n; } args;
void main() {
  uint i = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  if (int(i) < args.n) c[i] = a[i] * b[i] + 1.0;
}
