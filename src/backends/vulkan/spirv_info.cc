#include "spirv_info.h"

#include <tvm_runtime/backend/error.h>

#include <cstdio>
#include <cstring>
#include <map>

namespace tvm_runtime {
namespace vulkan {

namespace {

// Opcodes and enumerants of the SPIR-V specification (unified1).
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpCapability = 17;
constexpr uint32_t kExecutionModeLocalSize = 17;
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr size_t kHeaderWords = 5;

[[noreturn]] void Malformed(const std::string& kernel, const std::string& why) {
  backend::ThrowError("ValueError", "invalid SPIR-V for kernel '" + kernel + "': " + why +
                                        ". The module is corrupted or was not produced by a "
                                        "SPIR-V compiler.");
}

// A literal string inside words [begin, end): NUL-terminated, padded to a word boundary.
std::string ReadLiteral(const uint32_t* begin, const uint32_t* end, size_t* words_used,
                        const std::string& kernel) {
  const char* bytes = reinterpret_cast<const char*>(begin);
  size_t max = static_cast<size_t>(end - begin) * 4;
  size_t len = strnlen(bytes, max);
  if (len == max) Malformed(kernel, "an entry point name is not NUL-terminated");
  *words_used = len / 4 + 1;
  return std::string(bytes, len);
}

}  // namespace

const SpirvEntryPoint* SpirvInfo::FindCompute(const std::string& name) const {
  for (const SpirvEntryPoint& e : entry_points) {
    if (e.execution_model == kExecutionModelGLCompute && e.name == name) return &e;
  }
  return nullptr;
}

SpirvInfo ParseSpirv(const std::vector<uint32_t>& words, const std::string& kernel) {
  if (words.size() < kHeaderWords) {
    Malformed(kernel, std::to_string(words.size()) + " words is shorter than the 5-word header");
  }
  if (words[0] != kSpirvMagic) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "bad magic number 0x%08x (expected 0x%08x)", words[0],
                  kSpirvMagic);
    Malformed(kernel, buf);
  }
  SpirvInfo info;
  info.version = words[1];
  if ((info.version & 0xFF0000FFU) != 0 || (info.version >> 16) != 1) {
    Malformed(kernel, "unknown SPIR-V version word " + std::to_string(info.version));
  }
  if (words[3] == 0) Malformed(kernel, "the id bound is 0");
  std::map<uint32_t, size_t> by_id;  // entry point id -> index
  const uint32_t* end = words.data() + words.size();
  for (const uint32_t* p = words.data() + kHeaderWords; p < end;) {
    const uint32_t count = *p >> 16, opcode = *p & 0xFFFFU;
    if (count == 0) {
      Malformed(kernel, "an instruction at word " + std::to_string(p - words.data()) +
                            " has a word count of 0");
    }
    if (count > static_cast<size_t>(end - p)) {
      Malformed(kernel, "the instruction at word " + std::to_string(p - words.data()) +
                            " runs past the end of the module (truncated)");
    }
    if (opcode == kOpCapability && count >= 2) {
      info.capabilities.push_back(p[1]);
    } else if (opcode == kOpEntryPoint && count >= 4) {
      SpirvEntryPoint e;
      e.execution_model = p[1];
      e.id = p[2];
      size_t used = 0;
      e.name = ReadLiteral(p + 3, p + count, &used, kernel);
      by_id[e.id] = info.entry_points.size();
      info.entry_points.push_back(std::move(e));
    } else if (opcode == kOpExecutionMode && count >= 6 && p[2] == kExecutionModeLocalSize) {
      // Entry points precede their execution modes in a valid module.
      auto it = by_id.find(p[1]);
      if (it != by_id.end()) {
        SpirvEntryPoint& e = info.entry_points[it->second];
        e.has_local_size = true;
        e.local_size[0] = p[3];
        e.local_size[1] = p[4];
        e.local_size[2] = p[5];
      }
    }
    p += count;
  }
  return info;
}

std::string SpirvVersionString(uint32_t version) {
  return std::to_string((version >> 16) & 0xFF) + "." + std::to_string((version >> 8) & 0xFF);
}

std::string SpirvCapabilityName(uint32_t capability) {
  switch (capability) {
    case 9:
      return "Float16";
    case 10:
      return "Float64";
    case 11:
      return "Int64";
    case 12:
      return "Int64Atomics";
    case 22:
      return "Int16";
    case 39:
      return "Int8";
    case 4433:
      return "StorageBuffer16BitAccess";
    case 4434:
      return "UniformAndStorageBuffer16BitAccess";
    case 4435:
      return "StoragePushConstant16";
    case 4448:
      return "StorageBuffer8BitAccess";
    case 4449:
      return "UniformAndStorageBuffer8BitAccess";
    case 4450:
      return "StoragePushConstant8";
    case 6019:
      return "DotProductKHR";
    default:
      return "capability " + std::to_string(capability);
  }
}

}  // namespace vulkan
}  // namespace tvm_runtime
