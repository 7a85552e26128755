/*
 * CheckContextSymbols: what an exported library expects the runtime to provide, checked from the
 * file before dlopen runs any of it.
 *
 * Compiled host code calls the runtime through "context symbols": weak data slots (`__TVM*`)
 * the loader fills with function pointers.  Each apache-tvm release has its own set
 * (docs/compatibility.md): 0.25's host code calls `__TVMBackendGetFuncFromEnv`, 0.26 and 0.27
 * call `__TVMFFIEnvModLookupFromImports` and `__TVMFFIHandleInitOnce`.  A slot nobody fills stays
 * null, and the first kernel launch jumps to address 0: a dead process, no message.  So every
 * such slot the library declares must be one the runtime registered; anything else is a
 * convention this runtime does not know, refused here with its name.
 */
#include <dlfcn.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "compiler_versions.h"
#include "context_symbols.h"
#include "library_bin.h"

namespace tvm_runtime {
namespace core {
namespace {

namespace ffi = ::tvm::ffi;

bool StartsWith(const char* name, const char* prefix) {
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

std::set<std::string> FilledSlots() {
  std::set<std::string> names = {kLibraryBinSymbol, ffi::symbol::tvm_ffi_library_ctx};
  ffi::Module::VisitContextSymbols(
      [&names](ffi::String name, void*) { names.insert(std::string(name)); });
  return names;
}

[[noreturn]] void Refuse(const std::string& path, const std::string& what) {
  backend::ThrowError("ValueError", "Cannot load '" + path + "': " + what +
                                        ". This is a convention of a compiler tvm-runtime " +
                                        TVM_RUNTIME_VERSION + " does not know; it runs artifacts " +
                                        "of " + kSupportedCompilers + ". " + kReexportAdvice);
}

}  // namespace

std::vector<std::string> CheckContextSymbols(const MappedFile& file, const std::string& path) {
  std::vector<std::string> imported;
#ifdef TVM_RUNTIME_HAVE_ELF_H
  const std::set<std::string> filled = FilledSlots();
  VisitElfDynamicSymbols(
      file, [&](const Elf64_Ehdr&, const Elf64_Shdr*, const Elf64_Sym& sym, const char* name) {
        const int type = ELF64_ST_TYPE(sym.st_info);
        if (type == STT_FUNC || (type == STT_NOTYPE && sym.st_shndx == SHN_UNDEF)) {
          // Entry points (`__tvm_ffi_<name>`) are the library's own; runtime functions it calls
          // directly must be found once it is open.
          if (sym.st_shndx == SHN_UNDEF && StartsWith(name, "TVM")) imported.emplace_back(name);
          return false;
        }
        if (!StartsWith(name, "__TVM") && !StartsWith(name, "__tvm")) return false;
        if (filled.count(name) == 0) {
          Refuse(path, "it declares the context symbol '" + std::string(name) +
                           "', a slot it expects the runtime to fill, which tvm-runtime does not "
                           "provide (it would be called while still null)");
        }
        return false;
      });
#else
  (void)file;
  (void)path;
#endif
  return imported;
}

void CheckImportedFunctions(void* handle, const std::vector<std::string>& names,
                            const std::string& path) {
  for (const std::string& name : names) {
    if (dlsym(handle, name.c_str()) == nullptr && dlsym(RTLD_DEFAULT, name.c_str()) == nullptr) {
      dlclose(handle);
      Refuse(path, "its host code calls the runtime function '" + name +
                       "', which no loaded library provides (the call would end the process)");
    }
  }
}

}  // namespace core
}  // namespace tvm_runtime
