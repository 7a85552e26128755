/*
 * runtime.CheckLibraryBin(path): validates the `__tvm_ffi__library_bin` container of an exported
 * library (tvm-0.27-abi.md, section 3.2) before tvm-ffi parses it; tvm.runtime.load_module calls
 * it first.  tvm-ffi 0.1.15 trusts that container: an import-tree entry past the child list or
 * a child index past the module list is read out of bounds (a crash, not an error), and a short
 * container ends in an InternalError that names no file.  Fuzzing the loader found both.
 *
 * The file is mapped read-only, never loaded, so nothing in it runs; every size and index is
 * checked against the symbol's own size, and the embedded payloads (the model's weights) are
 * stepped over, not read: their own loaders check them.
 */
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core_init.h"

namespace tvm_runtime {
namespace core {
namespace {

constexpr char kLibraryBinSymbol[] = "__tvm_ffi__library_bin";

/* A read-only mapping of a whole file; empty when it cannot be mapped (dlopen reports why). */
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st{};
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const char*>(p);
        size_ = static_cast<size_t>(st.st_size);
      }
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return size_; }

  /* `count` objects of T at `offset`, or nullptr when they do not fit in the file. */
  template <typename T>
  const T* At(uint64_t offset, uint64_t count = 1) const {
    if (offset > size_ || count > (size_ - offset) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(data_ + offset);
  }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

struct Span {
  const char* data = nullptr;
  uint64_t size = 0;
};

/* The bytes of the dynamic symbol `name` (ELF64 little-endian, what every wheel we ship runs
 * on); an empty span when the file has no such symbol or is not an ELF file dlopen could take
 * (then dlopen, not this check, says what is wrong with it). */
Span FindDynamicSymbol(const MappedFile& f, const char* name) {
  const auto* eh = f.At<Elf64_Ehdr>(0);
  if (eh == nullptr || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr)) {
    return {};
  }
  const auto* sections = f.At<Elf64_Shdr>(eh->e_shoff, eh->e_shnum);
  if (sections == nullptr) return {};
  const size_t name_len = std::strlen(name);
  for (uint16_t s = 0; s < eh->e_shnum; ++s) {
    const Elf64_Shdr& symtab = sections[s];
    if (symtab.sh_type != SHT_DYNSYM || symtab.sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    const auto* syms = f.At<Elf64_Sym>(symtab.sh_offset, symtab.sh_size / sizeof(Elf64_Sym));
    const char* strings = f.At<char>(strtab.sh_offset, strtab.sh_size);
    if (syms == nullptr || strings == nullptr) return {};
    for (uint64_t i = 0; i < symtab.sh_size / sizeof(Elf64_Sym); ++i) {
      const Elf64_Sym& sym = syms[i];
      if (sym.st_name >= strtab.sh_size || strtab.sh_size - sym.st_name <= name_len ||
          std::memcmp(strings + sym.st_name, name, name_len + 1) != 0) {
        continue;
      }
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= eh->e_shnum) return {};
      const Elf64_Shdr& home = sections[sym.st_shndx];
      if (home.sh_type == SHT_NOBITS || sym.st_value < home.sh_addr ||
          sym.st_value - home.sh_addr > home.sh_size ||
          sym.st_size > home.sh_size - (sym.st_value - home.sh_addr)) {
        return {};
      }
      const char* bytes = f.At<char>(home.sh_offset + (sym.st_value - home.sh_addr), sym.st_size);
      if (bytes == nullptr) return {};
      return {bytes, sym.st_size};
    }
  }
  return {};
}

void CheckContainer(const Span& bin, const std::string& path) {
  backend::BlobReader outer(bin.data, bin.size,
                            std::string(kLibraryBinSymbol) + " of '" + path + "'");
  uint64_t nbytes = outer.Read<uint64_t>();
  if (nbytes > outer.remaining()) {
    outer.Fail("its size field says " + std::to_string(nbytes) + " bytes, the symbol holds " +
               std::to_string(outer.remaining()));
  }
  backend::BlobReader r(bin.data + sizeof(uint64_t), nbytes,
                        std::string(kLibraryBinSymbol) + " of '" + path + "'");
  std::vector<uint64_t> indptr = r.ReadVector<uint64_t>();
  std::vector<uint64_t> children = r.ReadVector<uint64_t>();
  if (indptr.size() < 2 || indptr[0] != 0) r.Fail("the import tree lists no module");
  const uint64_t num_modules = indptr.size() - 1;
  for (uint64_t i = 0; i < num_modules; ++i) {
    if (indptr[i + 1] < indptr[i] || indptr[i + 1] > children.size()) {
      r.Fail("import-tree row " + std::to_string(i) + " points outside the child list");
    }
    // export_library numbers every import after its parent, so the tree is acyclic; a cycle
    // would make every function lookup through the imports recurse forever.
    for (uint64_t j = indptr[i]; j < indptr[i + 1]; ++j) {
      if (children[j] <= i || children[j] >= num_modules) {
        r.Fail("module " + std::to_string(i) + " imports module " + std::to_string(children[j]) +
               " of " + std::to_string(num_modules));
      }
    }
  }
  for (uint64_t i = 0; i < num_modules; ++i) {
    std::string kind = r.ReadString();
    if (kind.empty()) r.Fail("module " + std::to_string(i) + " has no kind");
    if (kind == "_lib") continue;
    uint64_t payload = r.ReadCount(1, "a module payload");
    // tvm-ffi's reader fails on a zero-length payload with an error naming no file: say it here.
    if (payload == 0) {
      r.Fail("module " + std::to_string(i) + " ('" + kind + "') has an empty payload");
    }
    r.Skip(static_cast<size_t>(payload));
  }
}

void CheckLibraryBin(const std::string& path) {
  MappedFile file(path);
  if (file.data() == nullptr) return;
  Span bin = FindDynamicSymbol(file, kLibraryBinSymbol);
  if (bin.data != nullptr) CheckContainer(bin, path);
}

}  // namespace

void RegisterLibraryBinCheck() {
  ::tvm::ffi::reflection::GlobalDef().def("runtime.CheckLibraryBin", CheckLibraryBin);
}

}  // namespace core
}  // namespace tvm_runtime
