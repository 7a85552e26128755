#version 450
// multi_out_kernel: O0 = A * alpha + B, O1 = A - float(beta); alpha (float32) and beta (int32)
// in push-constant slots 0 and 1 (8 bytes each).
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufO0 { float O0[]; };
layout(std430, set = 0, binding = 3) writeonly buffer BufO1 { float O1[]; };
layout(push_constant) uniform Args {
  layout(offset = 0) float alpha;
  layout(offset = 8) int beta;
} args;
void main() {
  uint i = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  O0[i] = A[i] * args.alpha + B[i];
  O1[i] = A[i] - float(args.beta);
}
