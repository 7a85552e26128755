/* Registration of the Disco functions of libtvm_runtime_extra.so, called once from register.cc. */
#ifndef TVM_RUNTIME_EXTRA_DISCO_DISCO_REGISTER_H_
#define TVM_RUNTIME_EXTRA_DISCO_DISCO_REGISTER_H_

namespace tvm_runtime {
namespace extra {
namespace disco {

void RegisterWorkerContextFunctions();
void RegisterDiscoBuiltins();
void RegisterCpuCclFunctions();

inline void RegisterDiscoFunctions() {
  RegisterWorkerContextFunctions();
  RegisterDiscoBuiltins();
  RegisterCpuCclFunctions();
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_DISCO_REGISTER_H_
