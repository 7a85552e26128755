/*
 * Vendor status codes as text, for APIs that have no error-string query of their own (OpenCL,
 * Vulkan): each backend keeps a static table of the codes its specification defines, and the
 * lookup, the "NAME (code)" spelling and the exception raised for a failed call live here so
 * that every backend reports failures the same way.
 */
#ifndef TVM_RUNTIME_BACKEND_STATUS_CODES_H_
#define TVM_RUNTIME_BACKEND_STATUS_CODES_H_

#include <tvm_runtime/backend/error.h>

#include <cstddef>
#include <string>

namespace tvm_runtime {
namespace backend {

/* The entry of `table` (any struct with a `code` member) for `code`, or nullptr.  The tables
 * hold a few dozen entries and are only read on error paths, so a scan is enough. */
template <typename Entry, size_t N, typename Code>
const Entry* FindStatusCode(const Entry (&table)[N], Code code) {
  for (const Entry& entry : table) {
    if (entry.code == code) return &entry;
  }
  return nullptr;
}

/* "CL_INVALID_VALUE (-30)": the name users search for, plus the number driver logs print. */
inline std::string NamedStatus(const char* name, long long code) {
  return std::string(name) + " (" + std::to_string(code) + ")";
}

/* Throws RuntimeError "<api> error <status> in <what>", e.g. "OpenCL error CL_... (-5) in
 * clEnqueueNDRangeKernel of kernel 'k'". */
[[noreturn]] inline void ThrowStatusError(const char* api, const std::string& status,
                                          const std::string& what) {
  ThrowError("RuntimeError", std::string(api) + " error " + status + " in " + what);
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_STATUS_CODES_H_
