#version 450
// tiny_add_kernel: C = A + B over 4 elements, one workgroup of 4 (call-overhead benchmark).
layout(local_size_x = 4) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC { float c[]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  c[i] = a[i] + b[i];
}
