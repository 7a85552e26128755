/*
 * Global functions of the ROCm backend beyond the device table and module loaders, all under
 * "tvm_runtime.rocm.": module and code-object introspection, runtime diagnostics, and HIP
 * events for timing.  The Python hook (tvm.backend.rocm) wraps them.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_ROCM_GLOBALS_H_
#define TVM_RUNTIME_BACKENDS_ROCM_ROCM_GLOBALS_H_

namespace tvm_runtime {
namespace rocm {

/* describe_module, describe_code_object, driver_info. */
void RegisterDiagnosticGlobals();

/* event_create, event_record, event_synchronize, event_elapsed_ms, event_destroy and
 * runtime.timer.rocm. */
void RegisterEventGlobals();

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_ROCM_GLOBALS_H_
