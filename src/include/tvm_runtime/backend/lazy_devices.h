// Deprecated since 0.2.0, removed in 0.3.0: include <tvm_runtime/backend/gpu/lazy_devices.h> (SDK
// tiers, docs/plugins.md).
#include <tvm_runtime/backend/gpu/lazy_devices.h>  // IWYU pragma: export
