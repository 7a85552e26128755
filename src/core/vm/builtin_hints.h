/*
 * What to tell a user whose model calls a `vm.builtin.*` function that nothing registered: such a
 * name is part of apache-tvm's runtime, not of the artifact, so "re-export the artifact" would be
 * the wrong advice.
 */
#ifndef TVM_RUNTIME_CORE_VM_BUILTIN_HINTS_H_
#define TVM_RUNTIME_CORE_VM_BUILTIN_HINTS_H_

#include <string>

namespace tvm_runtime {
namespace core {
namespace vm {

/* True for the names apache-tvm's runtime reserves for VM builtins ("vm.builtin.*"). */
bool IsRuntimeBuiltinName(const std::string& name);

/* A sentence (with a leading space) saying the builtin is not provided and what to do instead. */
std::string UnprovidedBuiltinHint(const std::string& name);

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_BUILTIN_HINTS_H_
