/*
 * Who the calling thread is in a Disco session: worker id, world size, groups, its default device
 * and the collective library (CCL) its collectives go to.  apache-tvm 0.27 keeps the same facts
 * in a thread-local DiscoWorker; compiled code reaches them through `runtime.disco.worker_id` and
 * friends, and every collective builtin dispatches on `ccl`.
 *
 * The Python worker loop (tvm.backend.extra.disco) enters the context on the worker's thread
 * before it runs any command and leaves it when the worker stops.  GPU backends (the NCCL/RCCL
 * code of tvm-runtime-cuda / -rocm) read and update it through the private globals registered
 * here (`tvm_runtime.disco.*`), never by linking this DSO.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_WORKER_CONTEXT_H_
#define TVM_RUNTIME_EXTRA_DISCO_WORKER_CONTEXT_H_

#include <dlpack/dlpack.h>

#include <memory>
#include <string>

namespace tvm_runtime {
namespace extra {
namespace disco {

class CpuCcl;

struct WorkerContext {
  int worker_id = 0;
  int num_workers = 1;
  int num_groups = 1;
  int local_worker_id = 0;  // index among the workers of this node (a GPU index for NCCL)
  DLDevice default_device{kDLCPU, 0};
  std::string ccl = "cpu";      // where runtime.disco.<collective> goes: runtime.disco.<ccl>.*
  std::shared_ptr<CpuCcl> cpu;  // the cpu CCL's communicators, once initialised

  int group_size() const { return num_workers / num_groups; }
  int group_id() const { return worker_id / group_size(); }
  /* Whether this worker is "worker 0" of a collective: of its group, or of the whole session. */
  bool IsRoot(bool in_group) const {
    return in_group ? worker_id % group_size() == 0 : worker_id == 0;
  }
};

/* The calling thread's context; throws a RuntimeError naming `what` outside a Disco worker. */
WorkerContext& CurrentWorker(const char* what);

/* The calling thread's context, or nullptr. */
WorkerContext* CurrentWorkerOrNull();

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_WORKER_CONTEXT_H_
