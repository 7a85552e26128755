#version 450
// trivial_kernel: OUT[0] = 1 with one invocation (dispatch-overhead benchmark).
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer BufOut { float o[]; };
void main() { o[gl_GlobalInvocationID.x] = 1.0; }
