/*
 * TVMRuntimeInitialize: everything the core registers, run once when `import tvm` loads
 * libtvm_runtime.so.  Done explicitly (not in static constructors) so that a failure, e.g. a
 * global that another runtime in the process already registered, becomes a Python exception
 * instead of an abort while the library is being loaded.
 */
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include "core_init.h"
#include "device_registry.h"
#include "wheel_owners.h"

namespace tvm_runtime {
namespace core {

// Values written into every library tvm-ffi loads afterwards, when it defines the symbol.
void RegisterContextSymbols() {
  struct Entry {
    const char* name;
    void* value;
  };
  const Entry entries[] = {
      {"__TVMFFIFunctionCall", reinterpret_cast<void*>(TVMFFIFunctionCall)},
      // Our wrapper of tvm-ffi's lookup names the wheel that provides a missing function.
      {"__TVMFFIEnvModLookupFromImports", reinterpret_cast<void*>(LookupFromImportsWithHint)},
      {"__TVMFFIHandleInitOnce", reinterpret_cast<void*>(TVMFFIHandleInitOnce)},
      // apache-tvm 0.25 host code looks kernels up through this slot instead of the two above,
      // with the same (library_ctx, name, out) signature and a borrowed result it caches itself
      // (docs/compatibility.md, "Artifacts of older compilers").
      {"__TVMBackendGetFuncFromEnv", reinterpret_cast<void*>(LookupFromImportsWithHint)},
      {"__TVMFFIErrorSetRaisedFromCStr", reinterpret_cast<void*>(TVMFFIErrorSetRaisedFromCStr)},
      {"__TVMBackendAllocWorkspace", reinterpret_cast<void*>(TVMBackendAllocWorkspace)},
      {"__TVMBackendFreeWorkspace", reinterpret_cast<void*>(TVMBackendFreeWorkspace)},
      {"__TVMBackendParallelLaunch", reinterpret_cast<void*>(TVMBackendParallelLaunch)},
      {"__TVMBackendParallelBarrier", reinterpret_cast<void*>(TVMBackendParallelBarrier)},
  };
  for (const Entry& e : entries) Check(TVMFFIEnvModRegisterContextSymbol(e.name, e.value));
}

}  // namespace core
}  // namespace tvm_runtime

extern "C" TVM_RUNTIME_DLL int TVMRuntimeInitialize(char* err, size_t err_len) {
  using namespace tvm_runtime::core;
  return tvm_runtime::backend::RunOnceAndReport(
      [] {
        RegisterContextSymbols();
        RegisterCPUDevice();
        RegisterDeviceGlobals();
        RegisterTensorGlobals();
        RegisterThreadPoolGlobals();
        RegisterParamsGlobals();
        RegisterTimeEvaluator();
        RegisterVM();
        RegisterLanguageModelState();
        RegisterConstLoader();
        RegisterMissingBackendLoaders();
        RegisterLibraryBinCheck();
        RegisterLibraryLoader();
        RegisterBackendLoader();
        RegisterIdleMemory();
        RegisterRPCServer();
      },
      err, err_len);
}

extern "C" TVM_RUNTIME_DLL const char* TVMRuntimeVersion(void) { return TVM_RUNTIME_VERSION; }
