/* Registration functions of libtvm_runtime_extra.so, called once from register.cc. */
#ifndef TVM_RUNTIME_EXTRA_EXTRA_REGISTER_H_
#define TVM_RUNTIME_EXTRA_EXTRA_REGISTER_H_

namespace tvm_runtime {
namespace extra {

void RegisterSortFunctions();
void RegisterTopkFunction();
void RegisterRandomFunctions();
void RegisterThreadingFunctions();

namespace disco {  // only in a build with Disco (TVMRT_EXTRA_WITH_DISCO)

void RegisterWorkerContextFunctions();  // tvm_runtime.disco.*: the worker's identity
void RegisterDiscoBuiltins();           // runtime.disco.*: what compiled code calls
void RegisterCpuCclFunctions();         // runtime.disco.cpu.*: the cpu collective library

}  // namespace disco

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_EXTRA_REGISTER_H_
