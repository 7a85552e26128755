#version 450
// many_scalars_kernel: OUT[k] = s_k * (k + 1) for 20 float32 scalars in a uniform buffer at
// binding 1 (160 bytes of 8-byte slots: too many for push constants, so kUseUBO is set).
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer BufOut { float out_[]; };
layout(std140, set = 0, binding = 1) uniform Args {
  layout(offset = 0) float s0;
  layout(offset = 8) float s1;
  layout(offset = 16) float s2;
  layout(offset = 24) float s3;
  layout(offset = 32) float s4;
  layout(offset = 40) float s5;
  layout(offset = 48) float s6;
  layout(offset = 56) float s7;
  layout(offset = 64) float s8;
  layout(offset = 72) float s9;
  layout(offset = 80) float s10;
  layout(offset = 88) float s11;
  layout(offset = 96) float s12;
  layout(offset = 104) float s13;
  layout(offset = 112) float s14;
  layout(offset = 120) float s15;
  layout(offset = 128) float s16;
  layout(offset = 136) float s17;
  layout(offset = 144) float s18;
  layout(offset = 152) float s19;
} args;
void main() {
  out_[0] = args.s0 * float(0 + 1);
  out_[1] = args.s1 * float(1 + 1);
  out_[2] = args.s2 * float(2 + 1);
  out_[3] = args.s3 * float(3 + 1);
  out_[4] = args.s4 * float(4 + 1);
  out_[5] = args.s5 * float(5 + 1);
  out_[6] = args.s6 * float(6 + 1);
  out_[7] = args.s7 * float(7 + 1);
  out_[8] = args.s8 * float(8 + 1);
  out_[9] = args.s9 * float(9 + 1);
  out_[10] = args.s10 * float(10 + 1);
  out_[11] = args.s11 * float(11 + 1);
  out_[12] = args.s12 * float(12 + 1);
  out_[13] = args.s13 * float(13 + 1);
  out_[14] = args.s14 * float(14 + 1);
  out_[15] = args.s15 * float(15 + 1);
  out_[16] = args.s16 * float(16 + 1);
  out_[17] = args.s17 * float(17 + 1);
  out_[18] = args.s18 * float(18 + 1);
  out_[19] = args.s19 * float(19 + 1);
}
