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
 * TVM_RUNTIME_STATUS_TABLE declares exactly that traits struct and alias in one line.
 *
 * Vendors whose library names its own codes (CUDA's cuGetErrorName, HIP's hipGetErrorName) use
 * DriverNamedStatus instead: the traits give Describe and Hint, the message is "<what> failed:
 * <Describe>[. <hint>]".
 *
 * TVM_RUNTIME_STATUS_FUNCTIONS then gives a backend its conventional free functions over either
 * kind (CheckCl/ThrowClError/ClErrorString, CheckCu/...), so every backend checks the same way.
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
  static constexpr Code kSuccess = Traits::kSuccess;
};

/* The traits of a table-driven status (above) and `Status`, the VendorStatus over them; the
 * table itself is defined in the backend's .cc as `const StatusName<Code>* StatusTraits::Names`. */
#define TVM_RUNTIME_STATUS_TABLE(Status, CodeType, success, api_name, unknown_prefix) \
  struct Status##Traits {                                                             \
    using Code = CodeType;                                                            \
    static constexpr Code kSuccess = success;                                         \
    static constexpr const char* kApi = api_name;                                     \
    static constexpr const char* kUnknownPrefix = unknown_prefix;                     \
    static const ::tvm_runtime::backend::StatusName<Code>* Names(size_t* count);      \
  };                                                                                  \
  using Status = ::tvm_runtime::backend::VendorStatus<Status##Traits>

/* Codes the vendor library names itself.  Traits: Code, kSuccess, `std::string Describe(Code)`
 * ("CUDA_ERROR_OUT_OF_MEMORY (out of memory)") and `const char* Hint(Code)` (what the user can
 * do about it, or nullptr). */
template <typename Traits>
struct DriverNamedStatus {
  using Code = typename Traits::Code;
  static constexpr Code kSuccess = Traits::kSuccess;

  static std::string Describe(Code code) { return Traits::Describe(code); }

  /* Throws RuntimeError "<what> failed: <Describe>[. <hint>]". */
  [[noreturn]] static void Throw(Code code, const std::string& what, ThrowSite site = ThrowSite()) {
    std::string message = what + " failed: " + Traits::Describe(code);
    if (const char* hint = Traits::Hint(code)) message += std::string(". ") + hint;
    ThrowError("RuntimeError", message, site);
  }
};

/* A backend's free functions over `Status` (a VendorStatus or DriverNamedStatus):
 * `std::string DescribeFn(code)`, `[[noreturn]] ThrowFn(code, what)` and `CheckFn(code, what)`,
 * which throws unless code is the success code; `what` names the failed call.  Each takes the
 * call site as a defaulted last argument, so the backtrace starts where the call failed. */
#define TVM_RUNTIME_STATUS_FUNCTIONS(Status, DescribeFn, ThrowFn, CheckFn)            \
  inline std::string DescribeFn(Status::Code code) { return Status::Describe(code); } \
  [[noreturn]] inline void ThrowFn(                                                   \
      Status::Code code, const std::string& what,                                     \
      ::tvm_runtime::backend::ThrowSite site = ::tvm_runtime::backend::ThrowSite()) { \
    Status::Throw(code, what, site);                                                  \
  }                                                                                   \
  inline void CheckFn(                                                                \
      Status::Code code, const char* what,                                            \
      ::tvm_runtime::backend::ThrowSite site = ::tvm_runtime::backend::ThrowSite()) { \
    if (code != Status::kSuccess) Status::Throw(code, what, site);                    \
  }                                                                                   \
  inline void CheckFn(                                                                \
      Status::Code code, const std::string& what,                                     \
      ::tvm_runtime::backend::ThrowSite site = ::tvm_runtime::backend::ThrowSite()) { \
    if (code != Status::kSuccess) Status::Throw(code, what, site);                    \
  }                                                                                   \
  static_assert(true, "a semicolon after the macro")

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_STATUS_CODES_H_
