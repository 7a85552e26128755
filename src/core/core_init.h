/* Registration steps run once by TVMRuntimeInitialize (init.cc), one per source file. */
#ifndef TVM_RUNTIME_CORE_CORE_INIT_H_
#define TVM_RUNTIME_CORE_CORE_INIT_H_

namespace tvm_runtime {
namespace core {

void RegisterCPUDevice();
void RegisterDeviceGlobals();
void RegisterTensorGlobals();
void RegisterThreadPoolGlobals();
void RegisterParamsGlobals();
void RegisterTimeEvaluator();
void RegisterVM();
void RegisterLanguageModelState();  // KV cache, RNN state, sampling, weight cache (lm/)
void RegisterConstLoader();         // BYOC artifacts' constant loader, before the placeholders
void RegisterMissingBackendLoaders();
void RegisterLibraryBinCheck();  // runtime.CheckLibraryBin, before tvm-ffi parses a file
void RegisterLibraryLoader();    // runtime.LoadLibraryModule: exported libraries, no payload copies
void RegisterContextSymbols();
void RegisterBackendLoader();  // runtime.LoadBackend (backend_loader.h)
void RegisterIdleMemory();     // tvm_runtime.memory.release_idle (idle_memory.cc)
void RegisterRPCServer();      // tvm_runtime.rpc.*: the RPC server's native session (rpc/)

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_CORE_INIT_H_
