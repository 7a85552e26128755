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
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core_init.h"
#include "library_bin.h"

namespace tvm_runtime {
namespace core {

void CheckLibraryBinContainer(const SymbolBytes& bin, const std::string& path) {
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

namespace {

void CheckLibraryBin(const std::string& path) {
  MappedFile file(path, MappedFile::Mode::kReadOnly);
  if (!file.ok()) return;
  SymbolBytes bin = FindDynamicSymbol(file, kLibraryBinSymbol);
  if (bin.data != nullptr) CheckLibraryBinContainer(bin, path);
}

}  // namespace

void RegisterLibraryBinCheck() {
  ::tvm::ffi::reflection::GlobalDef().def("runtime.CheckLibraryBin", CheckLibraryBin);
}

}  // namespace core
}  // namespace tvm_runtime
