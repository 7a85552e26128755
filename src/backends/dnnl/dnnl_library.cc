#include "dnnl_library.h"

#include <dlfcn.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <mutex>
#include <string>

namespace tvm_runtime {
namespace dnnl_backend {
namespace {

constexpr char kInstallHint[] =
    "tvm-runtime-dnnl runs dnnl_json modules with oneDNN 2.x, opened at first use: install it "
    "from your distribution (Debian/Ubuntu: `apt-get install libdnnl2`, the runtime of "
    "libdnnl-dev) or point TVM_DNNL_LIBRARY at a libdnnl.so.2.  oneDNN 3.x (libdnnl.so.3, the "
    "`onednn` package on PyPI) has a different C API and is not supported yet.";

struct Loaded {
  DnnlApi api;
  std::string error;  // empty when api is usable
};

const Loaded& Load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    DnnlApi api;
    backend::VendorLibrary lib = backend::OpenVendorLibrary(
        backend::VendorLibraryCandidates("TVM_DNNL_LIBRARY", {"libdnnl.so.2"}),
        [&api](void* handle, std::string* why) {
#define TVM_RUNTIME_DNNL_RESOLVE(name)                                   \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (api.name == nullptr) {                                             \
    *why = "no symbol " #name " (not oneDNN 2.x)";                       \
    return false;                                                        \
  }
          TVM_RUNTIME_DNNL_FUNCTIONS(TVM_RUNTIME_DNNL_RESOLVE)
#undef TVM_RUNTIME_DNNL_RESOLVE
          return true;
        });
    if (lib.handle == nullptr) {
      loaded.error =
          std::string("oneDNN is not available (tried: ") + lib.tried + "). " + kInstallHint;
      return;
    }
    api.path = lib.path;
    loaded.api = api;
  });
  return loaded;
}

}  // namespace

const DnnlApi& Dnnl() {
  const Loaded& loaded = Load();
  if (!loaded.error.empty()) backend::ThrowError("RuntimeError", loaded.error);
  return loaded.api;
}

std::string DnnlStatus() { return Load().error; }

void CheckDnnl(dnnl_status_t status, const std::string& what) {
  if (status == dnnl_success) return;
  const char* name = "error";
  switch (status) {
    case dnnl_out_of_memory:
      name = "out of memory";
      break;
    case dnnl_invalid_arguments:
      name = "invalid arguments";
      break;
    case dnnl_unimplemented:
      name = "unimplemented (no implementation for these shapes/attributes)";
      break;
    default:
      break;
  }
  backend::ThrowError("RuntimeError", "oneDNN failed: " + what + ": " + name + " (status " +
                                          std::to_string(static_cast<int>(status)) + ")");
}

}  // namespace dnnl_backend
}  // namespace tvm_runtime
