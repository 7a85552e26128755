#include "code_object.h"

#include <tvm_runtime/backend/error.h>

#include <cstdio>
#include <cstring>

namespace tvm_runtime {
namespace rocm {

namespace {

// ELF identification and header fields of an AMDGPU HSA code object (always ELF64 LE).
constexpr size_t kElf64HeaderSize = 64;
constexpr unsigned char kElfClass64 = 2;
constexpr unsigned char kElfData2Lsb = 1;
constexpr unsigned char kElfOsAbiAmdgpuHsa = 64;
constexpr uint16_t kElfMachineAmdgpu = 224;
constexpr size_t kOffsetOsAbi = 7;
constexpr size_t kOffsetAbiVersion = 8;
constexpr size_t kOffsetMachine = 18;
constexpr size_t kOffsetFlags = 48;

// e_flags fields (LLVM's AMDGPUUsage "ELF Header").
constexpr uint32_t kMachMask = 0x0ff;
constexpr uint32_t kXnackV3 = 0x100;
constexpr uint32_t kSrameccV3 = 0x200;
constexpr uint32_t kXnackMaskV4 = 0x300;
constexpr uint32_t kSrameccMaskV4 = 0xc00;

struct Mach {
  uint32_t value;
  const char* name;
};

// EF_AMDGPU_MACH values of the GCN/RDNA/CDNA processors ROCm runs on or could be asked to.
constexpr Mach kMachs[] = {
    {0x020, "gfx600"},          {0x021, "gfx601"},        {0x022, "gfx700"},
    {0x023, "gfx701"},          {0x024, "gfx702"},        {0x025, "gfx703"},
    {0x026, "gfx704"},          {0x028, "gfx801"},        {0x029, "gfx802"},
    {0x02a, "gfx803"},          {0x02b, "gfx810"},        {0x02c, "gfx900"},
    {0x02d, "gfx902"},          {0x02e, "gfx904"},        {0x02f, "gfx906"},
    {0x030, "gfx908"},          {0x031, "gfx909"},        {0x032, "gfx90c"},
    {0x033, "gfx1010"},         {0x034, "gfx1011"},       {0x035, "gfx1012"},
    {0x036, "gfx1030"},         {0x037, "gfx1031"},       {0x038, "gfx1032"},
    {0x039, "gfx1033"},         {0x03a, "gfx602"},        {0x03b, "gfx705"},
    {0x03c, "gfx805"},          {0x03d, "gfx1035"},       {0x03e, "gfx1034"},
    {0x03f, "gfx90a"},          {0x041, "gfx1100"},       {0x042, "gfx1013"},
    {0x043, "gfx1150"},         {0x044, "gfx1103"},       {0x045, "gfx1036"},
    {0x046, "gfx1101"},         {0x047, "gfx1102"},       {0x048, "gfx1200"},
    {0x04a, "gfx1151"},         {0x04c, "gfx942"},        {0x04e, "gfx1201"},
    {0x04f, "gfx950"},          {0x051, "gfx9-generic"},  {0x052, "gfx10-1-generic"},
    {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"}, {0x055, "gfx1152"},
    {0x058, "gfx1153"},         {0x059, "gfx12-generic"}, {0x05f, "gfx9-4-generic"},
};

uint16_t ReadU16(const std::string& s, size_t at) {
  uint16_t v;
  std::memcpy(&v, s.data() + at, sizeof(v));
  return v;
}

uint32_t ReadU32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, sizeof(v));
  return v;
}

[[noreturn]] void NotACodeObject(const std::string& why) {
  backend::ThrowError("ValueError",
                      "the 'hip' module's code is not an AMDGPU code object (" + why +
                          "); the artifact was not written by apache-tvm 0.25-0.27 for "
                          "a rocm target, or it is corrupted");
}

std::string FeatureV4(uint32_t field, uint32_t any, uint32_t off, uint32_t on) {
  if (field == any) return "any";
  if (field == off) return "off";
  if (field == on) return "on";
  return "";  // unsupported by the processor
}

/* The device's setting of `feature` in a gcnArchName ("+", "-" or "" when not listed). */
std::string DeviceFeature(const std::string& arch, const std::string& feature) {
  size_t at = arch.find(":" + feature);
  if (at == std::string::npos) return "";
  size_t sign = at + 1 + feature.size();
  return sign < arch.size() ? std::string(1, arch[sign]) : "";
}

std::string FeatureMismatch(const std::string& feature, const std::string& object_setting,
                            const std::string& device_arch) {
  if (object_setting != "on" && object_setting != "off") return "";
  std::string device = DeviceFeature(device_arch, feature);
  std::string wanted = object_setting == "on" ? "+" : "-";
  if (device.empty() || device == wanted) return "";
  return "it was built with " + feature + wanted + " but the device runs with " + feature + device;
}

}  // namespace

std::string CodeObjectInfo::TargetId() const {
  std::string out = processor;
  if (sramecc == "on" || sramecc == "off")
    out += ":sramecc" + std::string(sramecc == "on" ? "+" : "-");
  if (xnack == "on" || xnack == "off") out += ":xnack" + std::string(xnack == "on" ? "+" : "-");
  return out;
}

CodeObjectInfo ParseCodeObject(const std::string& image) {
  if (image.size() < kElf64HeaderSize || std::memcmp(image.data(),
                                                     "\x7f"
                                                     "ELF",
                                                     4) != 0) {
    NotACodeObject("no ELF header");
  }
  if (static_cast<unsigned char>(image[4]) != kElfClass64 ||
      static_cast<unsigned char>(image[5]) != kElfData2Lsb) {
    NotACodeObject("not a little-endian ELF64 file");
  }
  if (ReadU16(image, kOffsetMachine) != kElfMachineAmdgpu) {
    NotACodeObject("ELF machine " + std::to_string(ReadU16(image, kOffsetMachine)) +
                   ", not EM_AMDGPU (224)");
  }
  if (static_cast<unsigned char>(image[kOffsetOsAbi]) != kElfOsAbiAmdgpuHsa) {
    NotACodeObject("OS ABI " + std::to_string(static_cast<unsigned char>(image[kOffsetOsAbi])) +
                   ", not AMDGPU HSA (64)");
  }
  CodeObjectInfo info;
  const int abi = static_cast<unsigned char>(image[kOffsetAbiVersion]);
  info.code_object_version = abi + 2;  // ELF ABI version 1 is code object v3, 2 is v4, ...
  const uint32_t flags = ReadU32(image, kOffsetFlags);
  info.mach = flags & kMachMask;
  info.processor = "";
  for (const Mach& m : kMachs) {
    if (m.value == info.mach) info.processor = m.name;
  }
  if (info.processor.empty()) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%03x", info.mach);
    info.processor = std::string("mach ") + hex;
  }
  info.generic = info.processor.find("generic") != std::string::npos;
  if (info.code_object_version == 3) {
    info.xnack = (flags & kXnackV3) != 0 ? "on" : "any";
    info.sramecc = (flags & kSrameccV3) != 0 ? "on" : "any";
  } else {
    info.xnack = FeatureV4(flags & kXnackMaskV4, 0x100, 0x200, 0x300);
    info.sramecc = FeatureV4(flags & kSrameccMaskV4, 0x400, 0x800, 0xc00);
  }
  return info;
}

std::string BaseProcessor(const std::string& gcn_arch_name) {
  return gcn_arch_name.substr(0, gcn_arch_name.find(':'));
}

std::string ArchMismatch(const CodeObjectInfo& info, const std::string& device_arch) {
  // A generic target runs on every member of its family: HIP knows the families, we do not.
  if (info.generic || device_arch.empty()) return "";
  if (info.processor != BaseProcessor(device_arch)) {
    return "it was built for " + info.processor + ", the device is " + BaseProcessor(device_arch);
  }
  std::string why = FeatureMismatch("xnack", info.xnack, device_arch);
  if (why.empty()) why = FeatureMismatch("sramecc", info.sramecc, device_arch);
  return why;
}

}  // namespace rocm
}  // namespace tvm_runtime
