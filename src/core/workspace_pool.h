/* The per-thread pools behind TVMBackendAllocWorkspace (workspace_pool.cc). */
#ifndef TVM_RUNTIME_CORE_WORKSPACE_POOL_H_
#define TVM_RUNTIME_CORE_WORKSPACE_POOL_H_

#include <cstdint>

namespace tvm_runtime {
namespace core {

/* Frees the CPU workspace blocks that every thread's pool keeps for its next kernel and no
 * kernel is using now; returns their bytes.  Safe while kernels run on other threads. */
uint64_t ReleaseIdleWorkspaces();

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_WORKSPACE_POOL_H_
