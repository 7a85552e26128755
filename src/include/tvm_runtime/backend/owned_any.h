// Deprecated since 0.2.0, removed in 0.3.0: include <tvm_runtime/backend/detail/owned_any.h> (SDK
// tiers, docs/plugins.md).
#include <tvm_runtime/backend/detail/owned_any.h>  // IWYU pragma: export
