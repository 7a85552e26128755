#include "pip_library.h"

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdlib>
#include <exception>

namespace tvm_runtime {
namespace cuda {

std::vector<std::string> PipLibraryCandidates(const PipLibrarySpec& spec) {
  const char* env = std::getenv(spec.env_var.c_str());
  if (env != nullptr && env[0] != '\0') return {env};  // an explicit choice never falls back
  std::vector<std::string> out;
  // The hook knows the wheel layouts; C++ only loads what it names.
  if (auto locate = ::tvm::ffi::Function::GetGlobal(kLibraryLocatorGlobal)) {
    try {
      auto found = (*locate)(::tvm::ffi::String(spec.locator_name))
                       .cast<::tvm::ffi::Array<::tvm::ffi::Any>>();
      for (const ::tvm::ffi::Any& path : found) {
        out.push_back(std::string(path.cast<::tvm::ffi::String>()));
      }
    } catch (const std::exception&) {
      // A broken locator must not hide the system library.
    }
  }
  for (const std::string& name : spec.sonames) {
    const char* conda = std::getenv("CONDA_PREFIX");
    if (conda != nullptr && conda[0] != '\0') out.push_back(std::string(conda) + "/lib/" + name);
  }
  out.insert(out.end(), spec.sonames.begin(), spec.sonames.end());
  return out;
}

backend::VendorLibrary OpenPipLibrary(const PipLibrarySpec& spec,
                                      const std::function<bool(void*, std::string*)>& accept,
                                      std::string* error) {
  backend::VendorLibrary lib = backend::OpenVendorLibrary(PipLibraryCandidates(spec), accept);
  if (lib.handle == nullptr) {
    *error = spec.what + " could not be opened. Install it with " + spec.install_hint +
             ", or set " + spec.env_var + " to the library's path. Tried: " +
             (lib.tried.empty() ? std::string("nothing") : lib.tried);
  }
  return lib;
}

}  // namespace cuda
}  // namespace tvm_runtime
