/* Registration steps of the Relax VM, run by RegisterVM() (vm/register.cc). */
#ifndef TVM_RUNTIME_CORE_VM_VM_INIT_H_
#define TVM_RUNTIME_CORE_VM_VM_INIT_H_

namespace tvm_runtime {
namespace core {
namespace vm {

void RegisterVMExecutable();     // module loaders (executable.cc)
void RegisterShapeBuiltins();    // shape heap, match/make shape, checks (builtins_shape.cc)
void RegisterMemoryBuiltins();   // storage, tensors, copies (builtins_memory.cc)
void RegisterControlBuiltins();  // tuples, closures, conditions (builtins_control.cc)
void RegisterPyFuncBuiltins();   // call_py_func registry (builtins_py_func.cc)
// relax.run.unique, nonzero, shape_to_tensor: R.unique / R.nonzero (relax_run.cc)
void RegisterRelaxRunBuiltins();

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_VM_INIT_H_
