#include "dnnl_library.h"

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <string>

namespace tvm_runtime {
namespace dnnl_backend {
namespace {

constexpr char kInstallHint[] =
    "tvm-runtime-dnnl runs dnnl_json modules with oneDNN 2.x, opened at first use: install it "
    "from your distribution (Debian/Ubuntu: `apt-get install libdnnl2`, the runtime of "
    "libdnnl-dev) or point TVM_DNNL_LIBRARY at a libdnnl.so.2.  oneDNN 3.x (libdnnl.so.3, the "
    "`onednn` package on PyPI) has a different C API and is not supported yet.";

void ResolveAll(backend::SymbolResolver& r, DnnlApi* api) {
#define TVM_RUNTIME_DNNL_RESOLVE(name) r.Required({#name}, &api->name);
  TVM_RUNTIME_DNNL_FUNCTIONS(TVM_RUNTIME_DNNL_RESOLVE)
#undef TVM_RUNTIME_DNNL_RESOLVE
}

const backend::VendorApi<DnnlApi>& Load() {
  static DnnlApi table;
  static const backend::VendorApi<DnnlApi> loaded = [] {
    backend::VendorApiMessages msg{"oneDNN 2.x library", "oneDNN 3.x and other versions differ",
                                   "oneDNN is not available", kInstallHint};
    backend::VendorApi<DnnlApi> out = backend::OpenVendorApi(
        backend::VendorLibraryCandidates("TVM_DNNL_LIBRARY", {"libdnnl.so.2"}), &table, &ResolveAll,
        msg);
    table.path = out.path;
    return out;
  }();
  return loaded;
}

}  // namespace

const DnnlApi& Dnnl() {
  const backend::VendorApi<DnnlApi>& loaded = Load();
  if (loaded.api == nullptr) backend::ThrowError("RuntimeError", loaded.failure);
  return *loaded.api;
}

std::string DnnlStatus() { return Load().failure; }

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
