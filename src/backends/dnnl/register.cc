/*
 * Entry points of libtvm_runtime_dnnl.so.  Registration only installs the dnnl_json loader (over
 * the core's placeholder) and a status query: oneDNN itself is opened when the first dnnl_json
 * module is initialized, so `import tvm` never touches it.
 */
#include <tvm_runtime/backend/backend_entry.h>
#include <tvm_runtime/backend/global_function.h>

#include <string>

#include "dnnl_library.h"

namespace tvm_runtime {
namespace dnnl_backend {

void RegisterDnnlJsonRuntime();

void RegisterDnnlBackend() {
  RegisterDnnlJsonRuntime();
  // "" when oneDNN can be opened, else what is missing and the package that provides it.
  backend::SetGlobalFunction(backend::PrivateGlobalName("dnnl", "library_status"),
                             []() { return DnnlStatus(); });
  backend::SetGlobalFunction(backend::PrivateGlobalName("dnnl", "library_path"),
                             []() { return Dnnl().path; });
}

}  // namespace dnnl_backend
}  // namespace tvm_runtime

TVM_RUNTIME_DEFINE_BACKEND_ENTRY(::tvm_runtime::dnnl_backend::RegisterDnnlBackend)
