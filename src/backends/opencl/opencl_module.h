/*
 * Device module of kind "opencl" (apache-tvm 0.27 payload: `str fmt; map<str, FunctionInfo>
 * fmap; str code`) and its loader `ffi.Module.load_from_bytes.opencl`.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_MODULE_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_MODULE_H_

#include <tvm/ffi/extra/module.h>

#include <string>

namespace tvm_runtime {
namespace opencl {

/* Parses and validates a payload; nothing touches OpenCL until a kernel is first called. */
::tvm::ffi::Module LoadOpenCLModule(std::string payload);

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_MODULE_H_
