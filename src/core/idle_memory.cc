/*
 * tvm_runtime.memory.release_idle(): gives back to the system the memory a process keeps only to
 * run its next call faster.
 *
 * After a model's first call, a process holds its working memory: the VM's storages parked in
 * the pooled allocators, the kernels' workspaces parked in every thread's pool, and what the C
 * library keeps of freed blocks.  For a model of 20 MB of weights that is 10-15 MB per process,
 * which the weight store cannot share (each process writes its own activations).  A server whose
 * workers sit idle between requests calls this when it goes idle: the next call faults the pages
 * in again (a few milliseconds for such a model), nothing else changes.
 */
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core_init.h"
#include "vm/allocators.h"
#include "workspace_pool.h"

namespace tvm_runtime {
namespace core {

namespace {

int64_t ReleaseIdleMemory() {
  uint64_t bytes = vm::ClearAllocators() + ReleaseIdleWorkspaces();
#if defined(__GLIBC__)
  // Blocks freed above (and by tensors released earlier) stay in glibc's heaps until trimmed;
  // elsewhere (macOS, musl) free() hands large blocks back by itself.
  malloc_trim(0);
#endif
  return static_cast<int64_t>(bytes);
}

}  // namespace

void RegisterIdleMemory() {
  ::tvm::ffi::reflection::GlobalDef().def("tvm_runtime.memory.release_idle", ReleaseIdleMemory);
}

}  // namespace core
}  // namespace tvm_runtime
