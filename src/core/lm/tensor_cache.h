/*
 * The process-wide tensor cache: named tensors (a model's weights) loaded once and shared by every
 * VirtualMachine of the process, as apache-tvm 0.27's `vm.builtin.tensor_cache.*` keeps them.
 * Safe to use from several threads.
 */
#ifndef TVM_RUNTIME_CORE_LM_TENSOR_CACHE_H_
#define TVM_RUNTIME_CORE_LM_TENSOR_CACHE_H_

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/optional.h>

#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace core {
namespace lm {

::tvm::ffi::Optional<::tvm::ffi::Tensor> TensorCacheGet(const std::string& name);

/* Inserts all entries at once (a failed load leaves the cache as it was). Without `overwrite`,
 * an existing name is a ValueError. */
void TensorCacheInsert(std::vector<std::pair<std::string, ::tvm::ffi::Tensor>> entries,
                       bool overwrite);

/* Number of entries (for messages). */
size_t TensorCacheSize();

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_TENSOR_CACHE_H_
