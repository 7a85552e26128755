/*
 * Link and go: the core registers everything it serves while the dynamic loader loads it, so a
 * C++ program that links libtvm_runtime (or dlopens it) can load artifacts without calling
 * anything of ours first.  The registration is cheap (function objects and context symbols; no
 * driver, file or thread is touched) and never throws: TVMRuntimeInitialize keeps its outcome,
 * and every later call, such as the one `import tvm` makes, returns that same outcome and
 * reason.  Why a load-time constructor rather than a lazy hook: docs/design.md, "Link and go".
 *
 * This file is linked after every other source of the core (packages/tvm-runtime/CMakeLists.txt),
 * so its initialiser runs after theirs: the linkers run .init_array entries in input order.
 */
#include <tvm_runtime/c_api.h>

namespace {

struct InitializeAtLoad {
  InitializeAtLoad() { TVMRuntimeInitialize(nullptr, 0); }
};

const InitializeAtLoad kInitializeAtLoad;

}  // namespace
