/*
 * Device module of kind "hip" (apache-tvm 0.27 payload: `str fmt; map<str, FunctionInfo> fmap;
 * bytes code`, fmt "hsaco" = one AMDGPU code object) and its loaders
 * `ffi.Module.load_from_bytes.hip` / `.hsaco`.
 *
 * Loading parses the payload and the code object's ELF header (its gfx architecture) without
 * touching HIP.  On first launch on a device the architecture is checked against the device's
 * gcnArchName, then the code object is loaded with hipModuleLoadData and every kernel's
 * hipFunction_t is looked up, once per device.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_ROCM_MODULE_H_
#define TVM_RUNTIME_BACKENDS_ROCM_ROCM_MODULE_H_

#include <tvm/ffi/container/map.h>
#include <tvm/ffi/extra/module.h>
#include <tvm_runtime/backend/gpu/kernel_image_module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "code_object.h"
#include "hip_api.h"

namespace tvm_runtime {
namespace rocm {

/* The code object loaded on one device. */
struct HipImage {
  const HipApi* api = nullptr;
  hipModule_t module = nullptr;
  int32_t device_id = 0;
  std::vector<hipFunction_t> functions;  // by kernel index; nullptr: not in the code object

  ~HipImage();
};

class RocmModule final : public backend::KernelImageModule<HipImage> {
 public:
  RocmModule(std::string payload, backend::KernelImagePayload parsed, CodeObjectInfo code_object);

  const CodeObjectInfo& code_object() const { return code_object_; }

 protected:
  ::tvm::ffi::Function MakeKernelFunction(const std::string& name,
                                          const backend::FunctionInfo& info) final;
  std::unique_ptr<HipImage> Load(int32_t device_id) final;

 private:
  CodeObjectInfo code_object_;
};

/* Parses and validates a payload; nothing touches HIP until a kernel is first called. */
::tvm::ffi::Module LoadRocmModule(std::string payload);

/* The function table and code object of a module made by LoadRocmModule, for diagnostics and
 * tests: {"fmt", "kernels" (as backend::DescribeFunctionTable), "code_object": {"processor",
 * "target_id", "xnack", "sramecc", "code_object_version", "generic", "bytes"}}.  TypeError for
 * any other module. */
::tvm::ffi::Map<::tvm::ffi::String, ::tvm::ffi::Any> DescribeRocmModule(
    const ::tvm::ffi::Module& module);

/* The code-object part of DescribeRocmModule, for a raw code object. */
::tvm::ffi::Map<::tvm::ffi::String, ::tvm::ffi::Any> DescribeCodeObject(const std::string& image);

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_ROCM_MODULE_H_
