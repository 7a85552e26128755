#version 450
// grid3d_kernel: OUT[z][y][x] = x * 10000 + y * 100 + z over a 3-D grid of 3-D workgroups
// (workgroup size 4x5x1 baked in; the launch passes all six dimensions).
layout(local_size_x = 4, local_size_y = 5, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer BufOut { int o[]; };
void main() {
  uvec3 g = gl_GlobalInvocationID;
  uvec3 size = gl_NumWorkGroups * gl_WorkGroupSize;
  o[(g.z * size.y + g.y) * size.x + g.x] = int(g.x * 10000u + g.y * 100u + g.z);
}
