/*
 * runtime.LoadLibraryModule(path): how tvm.runtime.load_module opens an exported library.
 *
 * It does what tvm-ffi's `.so` loader does (dlopen, the context symbols, the module tree of the
 * embedded `__tvm_ffi__library_bin` container, `__tvm_ffi__library_ctx`), but reads the
 * container from a copy-on-write mapping of the file instead of from the loaded image: tvm-ffi
 * 0.1.15 copies every embedded payload twice (into a std::string, then into an ffi::Bytes)
 * before its loader sees it, so a model's weights were resident three times after loading
 * (the image, the saved payload, the constant tensors).  Here the Relax executable parses its
 * payload in place and its tensor constants are copied or uploaded straight out of the file
 * when a VM needs them (vm/constant_pool.h); device-module payloads (kernels) are still handed
 * over as ffi::Bytes, their loaders' interface, and their pages released after.
 *
 * The container is validated before dlopen runs any of the library's code
 * (CheckLibraryBinContainer): a corrupted artifact is a ValueError naming the file.
 */
#include <dlfcn.h>
#include <tvm/ffi/cast.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler_versions.h"
#include "const_loader.h"
#include "context_symbols.h"
#include "core_init.h"
#include "library_bin.h"
#include "mapped_file.h"
#include "vm/executable.h"
#include "vm/payload.h"

namespace tvm_runtime {
namespace core {
namespace {

namespace ffi = ::tvm::ffi;

/* The host code of a dlopen'ed library: functions are its `__tvm_ffi_<name>` symbols.  The
 * library is closed when the last module, function or closure referring to it is gone. */
class LibraryModule final : public ffi::ModuleObj {
 public:
  explicit LibraryModule(void* handle) : handle_(handle) {}
  ~LibraryModule() { dlclose(handle_); }

  const char* kind() const final { return "library"; }
  int GetPropertyMask() const final {
    return ffi::Module::kBinarySerializable | ffi::Module::kRunnable;
  }

  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    auto call = reinterpret_cast<TVMFFISafeCallType>(
        Symbol(std::string(ffi::symbol::tvm_ffi_symbol_prefix) + std::string(name)));
    if (call == nullptr) return std::nullopt;
    // The function keeps the library (and so its code) loaded.
    ffi::Module self = ffi::GetRef<ffi::Module>(this);
    return ffi::Function::FromPacked([call, self](ffi::PackedArgs args, ffi::Any* rv) {
      TVM_FFI_CHECK_SAFE_CALL(call(nullptr, reinterpret_cast<const TVMFFIAny*>(args.data()),
                                   args.size(), reinterpret_cast<TVMFFIAny*>(rv)));
    });
  }

  ffi::Optional<ffi::String> GetFunctionMetadata(const ffi::String& name) final {
    return CallStringGetter(ffi::symbol::tvm_ffi_metadata_prefix, name);
  }
  ffi::Optional<ffi::String> GetFunctionDoc(const ffi::String& name) final {
    return CallStringGetter(ffi::symbol::tvm_ffi_doc_prefix, name);
  }

  void* Symbol(const std::string& name) const { return dlsym(handle_, name.c_str()); }

 private:
  ffi::Optional<ffi::String> CallStringGetter(const char* prefix, const ffi::String& name) {
    void* getter = Symbol(prefix + std::string(name));
    if (getter == nullptr) return std::nullopt;
    return ffi::Function::InvokeExternC(nullptr, reinterpret_cast<TVMFFISafeCallType>(getter))
        .cast<ffi::String>();
  }

  void* handle_;
};

ffi::Module LoadFromBytes(const std::string& kind, const char* data, size_t size,
                          const std::string& path) {
  std::string key = "ffi.Module.load_from_bytes." + kind;
  std::optional<ffi::Function> loader = ffi::Function::GetGlobal(key);
  if (!loader.has_value()) {
    backend::ThrowError("RuntimeError",
                        "'" + path + "' holds a module of kind '" + kind +
                            "', which no installed tvm-runtime wheel can load (no " + key +
                            " is registered). Check `python -m tvm.backend` for the backends "
                            "this environment has; tvm-runtime runs the module kinds of " +
                            kSupportedCompilers + ".");
  }
  return (*loader)(ffi::Bytes(data, size)).cast<ffi::Module>();
}

/* The module tree the container describes, with `lib` wherever it says "_lib".  Payloads are
 * read where `bin` points; `file` is the mapping they lie in, or nullptr when they lie in the
 * loaded image instead (then the executable gets a copy). */
ffi::Module BuildModuleTree(const SymbolBytes& bin, const std::shared_ptr<const MappedFile>& file,
                            const ffi::ObjectPtr<LibraryModule>& lib, const std::string& path) {
  const std::string what = std::string(kLibraryBinSymbol) + " of '" + path + "'";
  backend::BlobReader outer(bin.data, bin.size, what);
  uint64_t nbytes = outer.Read<uint64_t>();
  const char* body = bin.data + sizeof(uint64_t);
  backend::BlobReader r(body, static_cast<size_t>(nbytes), what);
  std::vector<uint64_t> indptr = r.ReadVector<uint64_t>();
  std::vector<uint64_t> children = r.ReadVector<uint64_t>();
  std::vector<ffi::Module> modules;
  modules.reserve(indptr.size() - 1);
  for (size_t i = 0; i + 1 < indptr.size(); ++i) {
    std::string kind = r.ReadString();
    if (kind == "_lib") {
      modules.emplace_back(lib);
      if (auto* ctx = static_cast<void**>(lib->Symbol(ffi::symbol::tvm_ffi_library_ctx))) {
        *ctx = lib.get();
      }
      continue;
    }
    uint64_t size = r.ReadCount(1, "a module payload");
    const char* payload = body + r.position();
    r.Skip(static_cast<size_t>(size));
    if (kind == "relax.VMExecutable") {
      std::shared_ptr<const vm::Payload> source;
      if (file != nullptr) {
        source = std::make_shared<vm::MappedPayload>(file, payload, size);
      } else {
        source = std::make_shared<vm::BytesPayload>(ffi::Bytes(payload, size));
      }
      modules.emplace_back(vm::VMExecutable::Parse(std::move(source)));
      continue;
    }
    if (kind == "const_loader" && file != nullptr) {
      // BYOC weights stay in the file (const_loader.h): no release of the span.
      modules.push_back(
          LoadConstLoaderShared(std::make_shared<vm::MappedPayload>(file, payload, size)));
      continue;
    }
    modules.push_back(LoadFromBytes(kind, payload, static_cast<size_t>(size), path));
    if (file != nullptr) file->Release(payload, static_cast<size_t>(size));
  }
  // CheckLibraryBinContainer made sure every child index is in range and after its parent.
  for (size_t i = 0; i < modules.size(); ++i) {
    for (uint64_t j = indptr[i]; j < indptr[i + 1]; ++j) {
      modules[i]->ImportModule(modules[children[j]]);
    }
  }
  return modules[0];
}

/* When dlopen failed because a library the artifact links (DT_NEEDED) is not found, asks the
 * backend registered as its provider (c_api.h 4a, runtime.library_provider.<stem>) to load it.
 * True when a provider did; a provider that cannot find it raises, naming what to install. */
bool ProvideMissingDependency(const std::string& dlopen_error, const std::string& path) {
  // glibc: "<soname>: cannot open shared object file: No such file or directory"
  size_t colon = dlopen_error.find(": cannot open shared object file");
  if (colon == std::string::npos) return false;
  std::string soname = dlopen_error.substr(0, colon);
  if (soname.find('/') != std::string::npos || soname == path) return false;
  std::string stem = soname.substr(0, soname.find(".so"));
  auto provider = ffi::Function::GetGlobal("runtime.library_provider." + stem);
  if (!provider.has_value()) return false;
  (*provider)(ffi::String(soname));
  return true;
}

ffi::Module LoadLibraryModule(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path, MappedFile::Mode::kCopyOnWrite, /*keep_fd=*/true);
  SymbolBytes bin;
  std::vector<std::string> imported;
  if (file->ok()) {
#ifdef TVM_RUNTIME_HAVE_ELF_H
    std::string truncated = ElfTruncation(*file);
    if (!truncated.empty()) {
      backend::ThrowError("ValueError", "cannot load the library '" + path + "': " + truncated);
    }
#endif
    bin = FindDynamicSymbol(*file, kLibraryBinSymbol);
    // Before dlopen: nothing of a corrupted library runs, not even its constructors; nor of
    // one expecting context symbols this runtime does not fill (another compiler's convention).
    if (bin.data != nullptr) CheckLibraryBinContainer(bin, path);
    imported = CheckContextSymbols(*file, path);
  }
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    std::string reason = why ? why : "dlopen failed";
    // Host code that links a vendor runtime (CUTLASS kernels need libcudart): the backend that
    // provides it loads it from its pip wheel, and the library is opened again.
    if (ProvideMissingDependency(reason, path)) {
      handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
      why = handle == nullptr ? dlerror() : nullptr;
      reason = why ? why : reason;
    }
    if (handle == nullptr) {
      backend::ThrowError("RuntimeError", "cannot load the library '" + path + "': " + reason);
    }
  }
  CheckImportedFunctions(handle, imported, path);
  auto lib = ffi::make_object<LibraryModule>(handle);
  // The addresses compiled host code calls through (TVMBackend*, tvm-ffi's C API).
  ffi::Module::VisitContextSymbols([&lib](ffi::String name, void* value) {
    if (auto* slot = static_cast<void**>(lib->Symbol(std::string(name)))) *slot = value;
  });
  if (bin.data == nullptr) {
    // Not found in the file (not ELF64, or no container): the loaded image may still have one.
    auto* image = static_cast<const char*>(lib->Symbol(kLibraryBinSymbol));
    if (image == nullptr) {
      if (auto* ctx = static_cast<void**>(lib->Symbol(ffi::symbol::tvm_ffi_library_ctx))) {
        *ctx = lib.get();
      }
      return ffi::Module(lib);
    }
    uint64_t nbytes = 0;
    std::memcpy(&nbytes, image, sizeof(nbytes));
    SymbolBytes in_image{image, nbytes + sizeof(nbytes)};
    CheckLibraryBinContainer(in_image, path);
    return BuildModuleTree(in_image, nullptr, lib, path);
  }
  return BuildModuleTree(bin, file, lib, path);
}

}  // namespace

void RegisterLibraryLoader() {
  ::tvm::ffi::reflection::GlobalDef().def("runtime.LoadLibraryModule", LoadLibraryModule);
  // A C++ program loads artifacts with tvm::ffi::Module::LoadFromFile, which calls this global:
  // it gets the checked loader too (a corrupted file is an error naming it, never a crash).
  ffi::Function::SetGlobal(
      "ffi.Module.load_from_file.so",
      ffi::Function::FromTyped(
          [](const std::string& path, const std::string&) { return LoadLibraryModule(path); }),
      /*override=*/true);
}

}  // namespace core
}  // namespace tvm_runtime
