#version 450
// null_arg_kernel: writes 7 to OUT[0]; its second buffer is never touched, so host code may
// pass NULL for it (the runtime binds a placeholder buffer).
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) writeonly buffer BufOut { int o[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufUnused { int unused[]; };
void main() { o[0] = 7; }
