#version 450
// workspace_kernel_1: C[j] = sum_i T[i, j]^2 over the 512 rows of the workspace T.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) writeonly buffer BufC { float C[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufT { float T[]; };
void main() {
  uint j = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  float s = 0.0;
  for (uint i = 0u; i < 512u; ++i) {
    float v = T[i * 1024u + j];
    s += v * v;
  }
  C[j] = s;
}
