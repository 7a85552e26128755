// Deprecated since 0.2.0, removed in 0.3.0: include <tvm_runtime/backend/vendor/vendor_library.h>
// (SDK tiers, docs/plugins.md).
#include <tvm_runtime/backend/vendor/vendor_library.h>  // IWYU pragma: export
