/*
 * Loader of the `webgpu` device module apache-tvm 0.27 embeds in exported libraries.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_MODULE_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_MODULE_H_

#include <tvm/ffi/extra/module.h>

#include <string>

namespace tvm_runtime {
namespace webgpu {

/* Parses the payload: `map<str, FunctionInfo> fmap; map<str, bytes> smap` (no `fmt` field:
 * WGSL is the only format), one WGSL source per kernel.  Nothing is compiled here. */
::tvm::ffi::Module LoadWebGPUModule(std::string payload);

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_MODULE_H_
