/*
 * A structural reader for SPIR-V modules: header, instruction stream, entry points,
 * capabilities and the LocalSize execution mode.
 *
 * Drivers do not validate SPIR-V (a malformed module can crash them inside
 * vkCreateShaderModule or vkCreateComputePipelines), so every shader is walked here first: a
 * bad magic number, a truncated instruction, an unterminated string or a missing entry point
 * becomes a Python exception naming the kernel instead.  It is not a full validator; with
 * TVM_VULKAN_VALIDATION=1 the Khronos layer checks the rest.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_SPIRV_INFO_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_SPIRV_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace vulkan {

constexpr uint32_t kSpirvMagic = 0x07230203;

struct SpirvEntryPoint {
  uint32_t execution_model = 0;  // 5 = GLCompute
  uint32_t id = 0;
  std::string name;
  bool has_local_size = false;
  uint32_t local_size[3] = {1, 1, 1};
};

struct SpirvInfo {
  uint32_t version = 0;  // header word 1: 0x00MMmm00
  std::vector<uint32_t> capabilities;
  std::vector<SpirvEntryPoint> entry_points;

  /* The GLCompute entry point called `name`, or nullptr. */
  const SpirvEntryPoint* FindCompute(const std::string& name) const;
};

/* Walks `words`; throws ValueError naming `kernel` if the module is malformed. */
SpirvInfo ParseSpirv(const std::vector<uint32_t>& words, const std::string& kernel);

/* "1.3" from a SPIR-V header version word. */
std::string SpirvVersionString(uint32_t version);

/* Name of a SPIR-V capability, e.g. "Float16" (or its number). */
std::string SpirvCapabilityName(uint32_t capability);

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_SPIRV_INFO_H_
