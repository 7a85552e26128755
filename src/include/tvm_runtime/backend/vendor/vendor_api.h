/*
 * A vendor driver API (CUDA driver, HIP runtime, ...) opened lazily as one table of function
 * pointers: the library is found with vendor_library.h, its entry points resolved with
 * dynamic_library.h, and a library lacking any required entry point is passed over as
 * unusable.  The outcome is kept as text, so a machine without the driver reports exactly what
 * was tried and how to fix it instead of failing at import.
 */
#ifndef TVM_RUNTIME_BACKEND_VENDOR_VENDOR_API_H_
#define TVM_RUNTIME_BACKEND_VENDOR_VENDOR_API_H_

#include <tvm_runtime/backend/vendor/dynamic_library.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <string>
#include <vector>

namespace tvm_runtime {
namespace backend {

template <typename Api>
struct VendorApi {
  const Api* api = nullptr;  // null when no candidate could be used
  std::string path;          // the file the entry points come from
  std::string failure;       // why api is null: what was tried and how to fix it
};

/* What to say about a library that cannot serve as `Api`. */
struct VendorApiMessages {
  const char* library;     // "CUDA driver library": what a candidate must be
  std::string unusable;    // appended after "(missing <symbols>); " for an incomplete candidate
  std::string not_found;   // leads the failure: "<not_found> (<tried>). "
  std::string how_to_fix;  // ends the failure
};

/* Opens the first of `candidates` (usually VendorLibraryCandidates(...)) for which
 * `resolve(SymbolResolver&, Api*)` finds every required entry point, filling `*table` (which must
 * outlive the process: backends pass a function-local static). */
template <typename Api, typename Resolve>
VendorApi<Api> OpenVendorApi(const std::vector<std::string>& candidates, Api* table,
                             Resolve&& resolve, const VendorApiMessages& msg) {
  VendorLibrary opened = OpenVendorLibrary(candidates, [&](void* handle, std::string* why) {
    SymbolResolver r(handle);
    resolve(r, table);
    if (r.missing().empty()) return true;
    *why = std::string("not a usable ") + msg.library + " (missing " + r.missing() + "); " +
           msg.unusable;
    return false;
  });
  VendorApi<Api> out;
  if (opened.handle != nullptr) {
    out.api = table;
    out.path = opened.path;
  } else {
    out.failure = msg.not_found + " (" + opened.tried + "). " + msg.how_to_fix;
  }
  return out;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_VENDOR_VENDOR_API_H_
