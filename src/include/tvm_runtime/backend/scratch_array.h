// Deprecated since 0.2.0, removed in 0.3.0: include <tvm_runtime/backend/gpu/scratch_array.h> (SDK
// tiers, docs/plugins.md).
#include <tvm_runtime/backend/gpu/scratch_array.h>  // IWYU pragma: export
