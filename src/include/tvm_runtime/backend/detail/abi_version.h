/*
 * Wording of ABI-version problems, shared by the core (TVMRuntimeCheckBackendABI, device-table
 * validation) and the backends' own registration check, so every path that applies
 * TVMRuntimeABICompatible (c_api.h) explains a refusal the same way.
 */
#ifndef TVM_RUNTIME_BACKEND_DETAIL_ABI_VERSION_H_
#define TVM_RUNTIME_BACKEND_DETAIL_ABI_VERSION_H_

#include <tvm_runtime/c_api.h>

#include <cstdint>
#include <string>

namespace tvm_runtime {
namespace backend {

/* "1.0" */
inline std::string ABIVersionString(uint32_t version) {
  return std::to_string(TVM_RUNTIME_ABI_MAJOR_OF(version)) + "." +
         std::to_string(TVM_RUNTIME_ABI_MINOR_OF(version));
}

/* "built for core ABI 2.0, but the loaded tvm-runtime core provides ABI 1.0" */
inline std::string DescribeABIMismatch(uint32_t required, uint32_t provided) {
  return "built for core ABI " + ABIVersionString(required) +
         ", but the loaded tvm-runtime core provides ABI " + ABIVersionString(provided);
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_DETAIL_ABI_VERSION_H_
