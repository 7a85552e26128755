// Deprecated since 0.2.0, removed in 0.3.0: include <tvm_runtime/backend/gpu/current_device.h> (SDK
// tiers, docs/plugins.md).
#include <tvm_runtime/backend/gpu/current_device.h>  // IWYU pragma: export
