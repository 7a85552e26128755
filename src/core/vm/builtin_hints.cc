#include "builtin_hints.h"

#include <string>

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

bool IsRuntimeBuiltinName(const std::string& name) { return StartsWith(name, "vm.builtin."); }

std::string UnprovidedBuiltinHint(const std::string& name) {
  if (StartsWith(name, "vm.builtin.cuda_graph.")) {
    return " It belongs to CUDA graph capture, which tvm-runtime does not provide: compile the "
           "model without it (apache-tvm: relax.backend.use_cuda_graph=False, the default).";
  }
  return " '" + name +
         "' is a runtime builtin of apache-tvm 0.27 that this tvm-runtime does not provide (it is "
         "not part of the artifact, so re-exporting does not help); run the model on apache-tvm's "
         "runtime, or register a global function of that name before creating the "
         "VirtualMachine.";
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
