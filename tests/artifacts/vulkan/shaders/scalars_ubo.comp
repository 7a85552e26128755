#version 450
// scalars_ubo_kernel: as scalars_kernel, but the scalars come in a uniform buffer at binding 2
// (the shader flag's kUseUBO bit), still one 8-byte slot per scalar.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer BufOI { int64_t oi[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufOF { double of_[]; };
layout(std140, set = 0, binding = 2) uniform Args {
  layout(offset = 0) int a;
  layout(offset = 8) int64_t b;
  layout(offset = 16) uint c;
  layout(offset = 24) float d;
  layout(offset = 32) double e;
} args;
void main() {
  oi[0] = int64_t(args.a);
  oi[1] = args.b;
  oi[2] = int64_t(args.c);
  of_[0] = double(args.d);
  of_[1] = args.e;
}
