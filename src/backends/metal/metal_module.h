/*
 * Device module of kind "metal" (apache-tvm 0.27 payload: `str fmt; map<str, FunctionInfo>
 * fmap; map<str, bytes> smap`, where fmt is "metal" (smap holds MSL source per kernel) or
 * "metallib" (a compiled Metal library per kernel)), its loader
 * `ffi.Module.load_from_bytes.metal` and the factory `ffi.Module.create.metal`.
 */
#ifndef TVM_RUNTIME_BACKENDS_METAL_METAL_MODULE_H_
#define TVM_RUNTIME_BACKENDS_METAL_METAL_MODULE_H_

#include <tvm/ffi/extra/module.h>

#include <string>

namespace tvm_runtime {
namespace metal {

/* Parses and validates a payload; nothing touches Metal until a kernel is first called. */
::tvm::ffi::Module LoadMetalModule(std::string payload);

/* Registers ffi.Module.create.metal(smap: Map[str, bytes], fmt: str, fmap: bytes[, source]):
 * the module of those kernels, `fmap` being the function table serialized as in a payload
 * (apache-tvm's FunctionInfo objects do not exist in this runtime). */
void RegisterMetalModuleFactory();

}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_METAL_MODULE_H_
