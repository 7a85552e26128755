/*
 * What to tell a user whose artifact calls a global function that nothing registered (the VM's
 * "Cannot find function" and compiled host code's lookups), so the advice names what is really
 * wrong: a wheel that is not installed, a wheel whose version lacks the function, a runtime
 * function of apache-tvm 0.27 that tvm-runtime does not provide (and why), a function the
 * application is expected to register, or a kernel the artifact itself lacks.
 */
#ifndef TVM_RUNTIME_CORE_MISSING_FUNCTION_ADVICE_H_
#define TVM_RUNTIME_CORE_MISSING_FUNCTION_ADVICE_H_

#include <string>

namespace tvm_runtime {
namespace core {

/* Registered by the core's Python package (tvm.backend): (str distribution) -> str, one of
 * "not installed", "loaded <version>", or why an installed wheel is not loaded.  Only Python
 * knows what pip installed and why a hook did not load; without it the advice is less precise. */
constexpr const char* kDistributionStatusGlobal = "tvm_runtime.backend.distribution_status";

/* A sentence (with a leading space) saying why no global function `name` exists and what to do,
 * or "" when `name` looks like one of the artifact's own kernels (then the artifact lacks it and
 * re-exporting it is the fix). */
std::string MissingFunctionAdvice(const std::string& name);

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_MISSING_FUNCTION_ADVICE_H_
