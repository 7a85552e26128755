// Deprecated since 0.2.0, removed in 0.3.0: include <tvm_runtime/backend/detail/sha256.h> (SDK
// tiers, docs/plugins.md).
#include <tvm_runtime/backend/detail/sha256.h>  // IWYU pragma: export
