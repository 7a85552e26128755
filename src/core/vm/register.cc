/* RegisterVM: everything the Relax VM adds to the global registry, called once from
 * TVMRuntimeInitialize (never from a static constructor). */
#include "../core_init.h"
#include "allocators.h"
#include "inline_builtins.h"
#include "vm.h"
#include "vm_init.h"

namespace tvm_runtime {
namespace core {

void RegisterVM() {
  // Allocate the object type indices now rather than on first use.
  vm::StorageObj::_GetOrAllocRuntimeTypeIndex();
  vm::VMClosureObj::_GetOrAllocRuntimeTypeIndex();
  vm::RegisterVMExecutable();
  vm::RegisterShapeBuiltins();
  vm::RegisterMemoryBuiltins();
  vm::RegisterControlBuiltins();
  vm::RegisterRelaxRunBuiltins();
  vm::RegisterPyFuncBuiltins();
  vm::RememberInlineBuiltins();  // after the builtins it inlines are registered
}

}  // namespace core
}  // namespace tvm_runtime
