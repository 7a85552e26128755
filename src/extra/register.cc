/*
 * Entry points of libtvm_runtime_extra.so.  The Python hook calls TVMRuntimeBackendRegister,
 * which registers the contrib global functions and Disco's worker-side functions; nothing runs in a
 * static constructor.  There is no device API or module loader: compiled host code reaches these
 * functions by name.
 */
#include <tvm_runtime/backend/backend_entry.h>

#include "extra_register.h"

namespace tvm_runtime {
namespace extra {

void RegisterExtraFunctions() {
  RegisterSortFunctions();
  RegisterTopkFunction();
  RegisterRandomFunctions();
  RegisterThreadingFunctions();
#if TVMRT_EXTRA_WITH_DISCO
  disco::RegisterWorkerContextFunctions();
  disco::RegisterDiscoBuiltins();
  disco::RegisterCpuCclFunctions();
#endif
}

}  // namespace extra
}  // namespace tvm_runtime

TVM_RUNTIME_DEFINE_BACKEND_ENTRY(::tvm_runtime::extra::RegisterExtraFunctions)
