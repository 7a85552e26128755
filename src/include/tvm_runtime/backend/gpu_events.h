// Deprecated since 0.2.0, removed in 0.3.0: include <tvm_runtime/backend/gpu/gpu_events.h> (SDK
// tiers, docs/plugins.md).
#include <tvm_runtime/backend/gpu/gpu_events.h>  // IWYU pragma: export
