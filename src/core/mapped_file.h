/*
 * A whole file mapped into memory, and the bytes of one of its exported symbols (a dynamic ELF
 * symbol on Linux, a Mach-O external symbol on macOS: macho_symbol.h).
 *
 * Two users: the library-bin check (maps the file read-only to validate it before anything of it
 * runs) and the library loader (maps it private and copy-on-write, so the model's weights are
 * read from the page cache instead of being copied out by tvm-ffi's loader, and tensors may
 * point into the mapping).  Both only read the file; a write through a copy-on-write mapping
 * stays in this process.
 */
#ifndef TVM_RUNTIME_CORE_MAPPED_FILE_H_
#define TVM_RUNTIME_CORE_MAPPED_FILE_H_

#if __has_include(<elf.h>)
#include <elf.h>
#define TVM_RUNTIME_HAVE_ELF_H 1
#endif
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "macho_symbol.h"

namespace tvm_runtime {
namespace core {

class MappedFile {
 public:
  enum class Mode {
    kReadOnly,     // PROT_READ: for inspection only
    kCopyOnWrite,  // PROT_READ | PROT_WRITE, MAP_PRIVATE: tensors may alias it, writes stay private
  };

  /* Maps `path`; `ok()` is false (and `error()` says why) when it cannot be opened or mapped.
   * With `keep_fd` the descriptor stays open for ReadAt (pread), so copies out of the file need
   * not fault its pages into this process. */
  MappedFile(const std::string& path, Mode mode, bool keep_fd = false) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      error_ = std::strerror(errno);
      return;
    }
    Map(mode);
    if (!keep_fd || data_ == nullptr) {
      close(fd_);
      fd_ = -1;
    }
  }
  /* Maps the file open as `fd`, which stays the caller's (to close when it likes: the mapping
   * does not need it). */
  MappedFile(int fd, Mode mode) : fd_(fd) {
    Map(mode);
    fd_ = -1;
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(data_, size_);
    if (fd_ >= 0) close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool ok() const { return data_ != nullptr; }
  /* The file exists but has no bytes (nothing to map). */
  bool empty() const { return empty_; }
  const std::string& error() const { return error_; }
  char* data() const { return data_; }
  size_t size() const { return size_; }

  /* `count` objects of T at `offset`, or nullptr when they do not fit in the file. */
  template <typename T>
  const T* At(uint64_t offset, uint64_t count = 1) const {
    if (offset > size_ || count > (size_ - offset) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(data_ + offset);
  }

  /* Whether [p, p + n) lies inside the mapping. */
  bool Contains(const void* p, size_t n) const {
    const char* c = static_cast<const char*>(p);
    return c >= data_ && c <= data_ + size_ && n <= static_cast<size_t>(data_ + size_ - c);
  }

  /* Copies the file bytes that the mapping shows at [p, p + n) into `dst` with pread when the
   * descriptor was kept (the kernel copies from the page cache: no page of the mapping becomes
   * resident), else with memcpy.  Returns false on a read error. */
  bool ReadAt(const void* p, size_t n, void* dst) const {
    if (fd_ < 0) {
      std::memcpy(dst, p, n);
      return true;
    }
    off_t offset = static_cast<off_t>(static_cast<const char*>(p) - data_);
    char* out = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t got = pread(fd_, out, n, offset);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      out += got;
      offset += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }

  /* Drops the pages lying wholly inside [p, p + n) from this process (they were read and are
   * not needed again soon; a later read faults them back from the page cache).  Only for ranges
   * nothing has written to: a private page that was written would revert to the file. */
  void Release(const void* p, size_t n) const {
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
    uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }

 private:
  void Map(Mode mode) {
    struct stat st{};
    if (fstat(fd_, &st) != 0) {
      error_ = std::strerror(errno);
    } else if (st.st_size == 0) {
      empty_ = true;
      error_ = "empty file";
    } else {
      int prot = mode == Mode::kReadOnly ? PROT_READ : PROT_READ | PROT_WRITE;
      void* p = mmap(nullptr, static_cast<size_t>(st.st_size), prot, MAP_PRIVATE, fd_, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<char*>(p);
        size_ = static_cast<size_t>(st.st_size);
      } else {
        error_ = std::strerror(errno);
      }
    }
  }

  char* data_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
  bool empty_ = false;
  std::string error_;
};

/* The bytes of a symbol, as the file stores them. */
struct SymbolBytes {
  const char* data = nullptr;
  uint64_t size = 0;
};

#ifdef TVM_RUNTIME_HAVE_ELF_H
/* Calls fn(header, sections, symbol, name) for each dynamic symbol of an ELF64 little-endian
 * file whose name lies inside the string table, until fn returns true; nothing when the file is
 * not such a file. */
template <typename Fn>
void VisitElfDynamicSymbols(const MappedFile& f, Fn fn) {
  const auto* eh = f.At<Elf64_Ehdr>(0);
  if (eh == nullptr || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr)) {
    return;
  }
  const auto* sections = f.At<Elf64_Shdr>(eh->e_shoff, eh->e_shnum);
  if (sections == nullptr) return;
  for (uint16_t s = 0; s < eh->e_shnum; ++s) {
    const Elf64_Shdr& symtab = sections[s];
    if (symtab.sh_type != SHT_DYNSYM || symtab.sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    const auto* syms = f.At<Elf64_Sym>(symtab.sh_offset, symtab.sh_size / sizeof(Elf64_Sym));
    const char* strings = f.At<char>(strtab.sh_offset, strtab.sh_size);
    if (syms == nullptr || strings == nullptr) return;
    for (uint64_t i = 0; i < symtab.sh_size / sizeof(Elf64_Sym); ++i) {
      const Elf64_Sym& sym = syms[i];
      if (sym.st_name >= strtab.sh_size) continue;
      const char* name = strings + sym.st_name;
      // Only names terminated inside the table.
      if (std::memchr(name, 0, strtab.sh_size - sym.st_name) == nullptr) continue;
      if (fn(*eh, sections, sym, name)) return;
    }
  }
}

/* The bytes of the dynamic symbol `name` of an ELF64 little-endian file; empty when it has none
 * or is not such a file. */
inline SymbolBytes FindElfDynamicSymbol(const MappedFile& f, const char* name) {
  SymbolBytes found;
  VisitElfDynamicSymbols(f, [&](const Elf64_Ehdr& eh, const Elf64_Shdr* sections,
                                const Elf64_Sym& sym, const char* sym_name) {
    if (std::strcmp(sym_name, name) != 0) return false;
    if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= eh.e_shnum) return true;
    const Elf64_Shdr& home = sections[sym.st_shndx];
    if (home.sh_type == SHT_NOBITS || sym.st_value < home.sh_addr ||
        sym.st_value - home.sh_addr > home.sh_size ||
        sym.st_size > home.sh_size - (sym.st_value - home.sh_addr)) {
      return true;
    }
    const char* bytes = f.At<char>(home.sh_offset + (sym.st_value - home.sh_addr), sym.st_size);
    if (bytes != nullptr) found = {bytes, sym.st_size};
    return true;
  });
  return found;
}

/* Why dlopen must not be given this ELF64 file, or "" when its loadable segments all lie inside
 * it.  glibc maps each PT_LOAD segment as its header says and touches it while relocating: a
 * segment that runs past the end of a truncated file kills the process with SIGBUS inside dlopen
 * instead of failing. */
inline std::string ElfTruncation(const MappedFile& f) {
  const auto* eh = f.At<Elf64_Ehdr>(0);
  if (eh == nullptr || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64) {
    return "";  // not ELF64: dlopen itself says what is wrong
  }
  const std::string sizes =
      "; the file has " + std::to_string(f.size()) + " bytes (a truncated copy or download?)";
  if (eh->e_phentsize != sizeof(Elf64_Phdr)) return "its ELF program headers are malformed";
  const auto* segments = f.At<Elf64_Phdr>(eh->e_phoff, eh->e_phnum);
  if (segments == nullptr) return "its ELF program headers lie past the end of the file" + sizes;
  for (uint16_t i = 0; i < eh->e_phnum; ++i) {
    const Elf64_Phdr& seg = segments[i];
    if (seg.p_type != PT_LOAD) continue;
    if (seg.p_offset > f.size() || seg.p_filesz > f.size() - seg.p_offset) {
      return "the file is truncated: its loadable segment " + std::to_string(i) +
             " needs bytes up to offset " + std::to_string(seg.p_offset + seg.p_filesz) + sizes;
    }
  }
  return "";
}
#endif  // TVM_RUNTIME_HAVE_ELF_H

/* The bytes of the exported symbol `name` of a shared library: ELF64 (Linux) or 64-bit Mach-O
 * (macOS), whichever the file is, on either system; empty when the file has no such symbol or is
 * not a library dlopen could take (then dlopen, not this lookup, says what is wrong with it). */
inline SymbolBytes FindDynamicSymbol(const MappedFile& f, const char* name) {
  if (macho::IsMachO64(f.data(), f.size())) {
    macho::SymbolSpan span = macho::FindSymbol(f.data(), f.size(), name);
    return {span.data, span.size};
  }
#ifdef TVM_RUNTIME_HAVE_ELF_H
  return FindElfDynamicSymbol(f, name);
#else
  return {};
#endif
}

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_MAPPED_FILE_H_
