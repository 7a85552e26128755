/*
 * The bytes of an exported symbol of a 64-bit Mach-O file (macOS arm64 / x86_64 dylibs), read
 * from the file itself: how the loader finds `__tvm_ffi__library_bin` in apache-tvm's macOS
 * artifacts without running any of their code, as it does with ELF files on Linux.
 *
 * The structures are spelled out here rather than taken from <mach-o/loader.h>, so the same
 * reader builds and is tested on Linux.  Mach-O symbols carry no size: a symbol extends to the
 * next symbol of its section, or to the end of the section.
 */
#ifndef TVM_RUNTIME_CORE_MACHO_SYMBOL_H_
#define TVM_RUNTIME_CORE_MACHO_SYMBOL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace core {
namespace macho {

constexpr uint32_t kMagic64 = 0xfeedfacf;  // little-endian 64-bit (every Mach-O macOS runs today)
constexpr uint32_t kSegment64 = 0x19;
constexpr uint32_t kSymtab = 0x2;
constexpr uint8_t kTypeMask = 0x0e;   // N_TYPE
constexpr uint8_t kInSection = 0x0e;  // N_SECT
constexpr uint8_t kExternal = 0x01;   // N_EXT
constexpr uint8_t kDebug = 0xe0;      // N_STAB
constexpr uint32_t kZeroFill = 0x1;   // S_ZEROFILL: no bytes in the file
constexpr uint32_t kThreadLocalZeroFill = 0x12;

struct Header {
  uint32_t magic, cputype, cpusubtype, filetype, ncmds, sizeofcmds, flags, reserved;
};
struct Command {
  uint32_t cmd, cmdsize;
};
struct Segment {
  uint32_t cmd, cmdsize;
  char segname[16];
  uint64_t vmaddr, vmsize, fileoff, filesize;
  uint32_t maxprot, initprot, nsects, flags;
};
struct Section {
  char sectname[16], segname[16];
  uint64_t addr, size;
  uint32_t offset, align, reloff, nreloc, flags, reserved1, reserved2, reserved3;
};
struct Symtab {
  uint32_t cmd, cmdsize, symoff, nsyms, stroff, strsize;
};
struct Nlist {
  uint32_t n_strx;
  uint8_t n_type, n_sect;
  uint16_t n_desc;
  uint64_t n_value;
};
static_assert(sizeof(Header) == 32 && sizeof(Segment) == 72 && sizeof(Section) == 80 &&
                  sizeof(Nlist) == 16,
              "Mach-O structures must have their on-disk sizes");

struct SymbolSpan {
  const char* data = nullptr;
  uint64_t size = 0;
};

/* `count` T's at `offset` of [file, file + size), or nullptr when they do not fit. */
template <typename T>
inline const T* At(const char* file, size_t size, uint64_t offset, uint64_t count = 1) {
  if (offset > size || count > (size - offset) / sizeof(T)) return nullptr;
  return reinterpret_cast<const T*>(file + offset);
}

inline bool IsMachO64(const char* file, size_t size) {
  const auto* h = At<Header>(file, size, 0);
  return h != nullptr && h->magic == kMagic64;
}

/* The bytes of the external symbol `name` (its C name: the leading underscore Mach-O adds is
 * added here); empty when the file is not a 64-bit Mach-O file, has no such symbol, or any of
 * its tables point outside the file. */
inline SymbolSpan FindSymbol(const char* file, size_t size, const char* name) {
  const auto* header = At<Header>(file, size, 0);
  if (header == nullptr || header->magic != kMagic64) return {};
  std::vector<Section> sections;  // n_sect numbers them from 1, across every segment in order
  const Symtab* symtab = nullptr;
  uint64_t offset = sizeof(Header);
  for (uint32_t i = 0; i < header->ncmds; ++i) {
    const auto* command = At<Command>(file, size, offset);
    if (command == nullptr || command->cmdsize < sizeof(Command)) return {};
    if (command->cmd == kSegment64) {
      const auto* segment = At<Segment>(file, size, offset);
      if (segment == nullptr || command->cmdsize < sizeof(Segment) ||
          (command->cmdsize - sizeof(Segment)) / sizeof(Section) < segment->nsects) {
        return {};
      }
      const auto* first = At<Section>(file, size, offset + sizeof(Segment), segment->nsects);
      if (first == nullptr) return {};
      sections.insert(sections.end(), first, first + segment->nsects);
    } else if (command->cmd == kSymtab) {
      symtab = At<Symtab>(file, size, offset);
      if (symtab == nullptr || command->cmdsize < sizeof(Symtab)) return {};
    }
    offset += command->cmdsize;
  }
  if (symtab == nullptr) return {};
  const auto* symbols = At<Nlist>(file, size, symtab->symoff, symtab->nsyms);
  const char* strings = At<char>(file, size, symtab->stroff, symtab->strsize);
  if (symbols == nullptr || strings == nullptr) return {};
  const std::string wanted = std::string("_") + name;
  for (uint32_t i = 0; i < symtab->nsyms; ++i) {
    const Nlist& sym = symbols[i];
    if ((sym.n_type & kDebug) || !(sym.n_type & kExternal) ||
        (sym.n_type & kTypeMask) != kInSection || sym.n_strx >= symtab->strsize ||
        symtab->strsize - sym.n_strx <= wanted.size() ||
        std::memcmp(strings + sym.n_strx, wanted.c_str(), wanted.size() + 1) != 0) {
      continue;
    }
    if (sym.n_sect == 0 || sym.n_sect > sections.size()) return {};
    const Section& home = sections[sym.n_sect - 1];
    const uint32_t type = home.flags & 0xff;
    if (type == kZeroFill || type == kThreadLocalZeroFill || sym.n_value < home.addr ||
        sym.n_value - home.addr > home.size) {
      return {};
    }
    // The symbol ends where the next symbol of the same section starts, or with the section.
    uint64_t end = home.addr + home.size;
    for (uint32_t j = 0; j < symtab->nsyms; ++j) {
      const Nlist& other = symbols[j];
      if (!(other.n_type & kDebug) && (other.n_type & kTypeMask) == kInSection &&
          other.n_sect == sym.n_sect && other.n_value > sym.n_value && other.n_value < end) {
        end = other.n_value;
      }
    }
    const uint64_t length = end - sym.n_value;
    const char* bytes = At<char>(file, size, home.offset + (sym.n_value - home.addr), length);
    if (bytes == nullptr) return {};
    return {bytes, length};
  }
  return {};
}

}  // namespace macho
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_MACHO_SYMBOL_H_
