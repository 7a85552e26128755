#version 450
// add_fp16_kernel: C = A + B in float16 storage and arithmetic (needs shaderFloat16 and
// storageBuffer16BitAccess, i.e. supports_float16 / supports_16bit_buffer).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC { float16_t c[]; };
void main() {
  uint i = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  c[i] = a[i] + b[i];
}
