#version 450
// add4096_kernel: C = A + B over 4096 float32, workgroup 128 (dispatch benchmark).
layout(local_size_x = 128) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float b[]; };
layout(std430, set = 0, binding = 2) buffer BufC { float c[]; };
void main() {
  uint i = gl_WorkGroupID.x * 128u + gl_LocalInvocationID.x;
  c[i] = a[i] + b[i];
}
