#version 450
// scalars_kernel: every scalar width apache-tvm passes, in push-constant slots of 8 bytes:
// int32 a, int64 b, uint32 c, float32 d, float64 e -> OI = [a, b, c], OF = [d, e].
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer BufOI { int64_t oi[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufOF { double of_[]; };
layout(push_constant) uniform Args {
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
