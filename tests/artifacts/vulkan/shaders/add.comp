#version 450
// add_kernel: C = A + B (float32), one element per invocation; grid 16 x workgroup 64.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC { float c[]; };
void main() {
  uint i = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  c[i] = a[i] + b[i];
}
