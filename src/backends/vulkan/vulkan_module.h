/*
 * Device module of kind "vulkan" (apache-tvm 0.27 payload: `str fmt; map<str, FunctionInfo>
 * fmap; map<str, Bytes> smap`, each smap value a SPIRVShader `u32 flag; vec<u32> words`) and its
 * loader `ffi.Module.load_from_bytes.vulkan`.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_MODULE_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_MODULE_H_

#include <tvm/ffi/extra/module.h>

#include <string>

namespace tvm_runtime {
namespace vulkan {

/* Parses and validates a payload (including every shader's SPIR-V structure and entry point);
 * nothing touches Vulkan until a kernel is first called. */
::tvm::ffi::Module LoadVulkanModule(std::string payload);

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_MODULE_H_
