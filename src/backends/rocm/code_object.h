/*
 * What an AMDGPU code object (the "hsaco" of a `hip` module) was built for, read from its ELF
 * header without any ROCm library: the processor (e_flags' EF_AMDGPU_MACH field, e.g. gfx90a)
 * and the xnack/sramecc target features.  The backend compares it with the device's
 * gcnArchName before hipModuleLoadData, whose own error for a wrong architecture does not say
 * which one was needed.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_CODE_OBJECT_H_
#define TVM_RUNTIME_BACKENDS_ROCM_CODE_OBJECT_H_

#include <cstdint>
#include <string>

namespace tvm_runtime {
namespace rocm {

struct CodeObjectInfo {
  std::string processor;  // "gfx90a"; "gfx9-generic" for generic targets; "mach 0x.." if unknown
  uint32_t mach = 0;      // EF_AMDGPU_MACH value
  bool generic = false;   // a generic target (runs on a family; checked by HIP itself)
  std::string xnack;      // "any", "on", "off" or "" (not applicable)
  std::string sramecc;    // likewise
  int code_object_version = 0;  // 3, 4, 5, 6 (from the ELF ABI version)

  /* "gfx90a:sramecc+:xnack-" style (features only when on/off), as ROCm spells targets. */
  std::string TargetId() const;
};

/* Parses the ELF header; ValueError when `image` is not an AMDGPU HSA code object. */
CodeObjectInfo ParseCodeObject(const std::string& image);

/* "" when a code object for `info` can run on a device whose gcnArchName is `device_arch`
 * (e.g. "gfx90a:sramecc+:xnack-"), else why not. */
std::string ArchMismatch(const CodeObjectInfo& info, const std::string& device_arch);

/* "gfx90a:sramecc+:xnack-" -> "gfx90a". */
std::string BaseProcessor(const std::string& gcn_arch_name);

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_CODE_OBJECT_H_
