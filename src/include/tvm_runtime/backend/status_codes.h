/*
 * Vendor status codes as readable errors, for every backend the same way.
 *
 * A backend declares only what is specific to its vendor API, in a small traits struct:
 *
 *     struct ClStatusTraits {
 *       using Code = cl_int;
 *       static constexpr Code kSuccess = CL_SUCCESS;
 *       static constexpr const char* kApi = "OpenCL";          // "OpenCL error ... in ..."
 *       static constexpr const char* kUnknownPrefix = "CL error ";  // codes not in the table
 *       static const StatusName<Code>* Names(size_t* count);    // the table, in the .cc
 *     };
 *     using ClStatus = VendorStatus<ClStatusTraits>;
 *
 * and gets Describe ("CL_INVALID_VALUE (-30)"), Throw (RuntimeError "OpenCL error
 * CL_INVALID_VALUE (-30) in <what>", with the C++ backtrace from the failing call site) and Check.
 */
#ifndef TVM_RUNTIME_BACKEND_STATUS_CODES_H_
#define TVM_RUNTIME_BACKEND_STATUS_CODES_H_

#include <tvm_runtime/backend/error.h>

#include <cstddef>
#include <string>

namespace tvm_runtime {
namespace backend {

/* One entry of a backend's status table. */
template <typename Code>
struct StatusName {
  Code code;
  const char* name;
  const char* hint = nullptr;  // what the code usually means for a compute runtime, if known
};

/* "CL_INVALID_VALUE (-30)": the name users search for, plus the number driver logs print. */
inline std::string NamedStatus(const char* name, long long code) {
  return std::string(name) + " (" + std::to_string(code) + ")";
}

template <typename Traits>
struct VendorStatus {
  using Code = typename Traits::Code;

  /* "NAME (code)", followed by ": hint" when the table has one; unknown codes come back as
   * kUnknownPrefix + code.  The tables hold a few dozen entries and are only read on error
   * paths, so a scan is enough. */
  static std::string Describe(Code code) {
    size_t count = 0;
    const StatusName<Code>* names = Traits::Names(&count);
    for (size_t i = 0; i < count; ++i) {
      if (names[i].code != code) continue;
      std::string out = NamedStatus(names[i].name, static_cast<long long>(code));
      if (names[i].hint != nullptr) out += std::string(": ") + names[i].hint;
      return out;
    }
    return Traits::kUnknownPrefix + std::to_string(static_cast<long long>(code));
  }

  /* Throws RuntimeError "<api> error <status> in <what>", e.g. "OpenCL error
   * CL_OUT_OF_RESOURCES (-5) in clEnqueueNDRangeKernel of kernel 'k'". */
  [[noreturn]] static void Throw(Code code, const std::string& what, ThrowSite site = ThrowSite()) {
    ThrowError("RuntimeError",
               std::string(Traits::kApi) + " error " + Describe(code) + " in " + what, site);
  }

  static void Check(Code code, const char* what, ThrowSite site = ThrowSite()) {
    if (code != Traits::kSuccess) Throw(code, what, site);
  }
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_STATUS_CODES_H_
