/*
 * Global functions of the CUDA backend beyond the device table and module loader, all under
 * "tvm_runtime.cuda.": NVRTC compilation and diagnostics, module introspection, and CUDA
 * events for timing.  The Python hook (tvm.backend.cuda) wraps them.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_GLOBALS_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_GLOBALS_H_

namespace tvm_runtime {
namespace cuda {

/* nvrtc_info, compile_source, describe_module, cache_dir, driver_info. */
void RegisterCompilerGlobals();

/* event_create, event_record, event_synchronize, event_elapsed_ms, event_destroy. */
void RegisterEventGlobals();

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_GLOBALS_H_
