#include "worker_context.h"

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>

#include <memory>
#include <string>

#include "../extra_register.h"
#include "cpu_ccl.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

namespace ffi = ::tvm::ffi;

namespace {

thread_local std::unique_ptr<WorkerContext> t_worker;

void EnterWorker(int worker_id, int num_workers, int num_groups, int local_worker_id) {
  if (num_workers < 1 || num_groups < 1 || num_workers % num_groups != 0 || worker_id < 0 ||
      worker_id >= num_workers || local_worker_id < 0) {
    backend::ThrowError("ValueError",
                        "a Disco worker needs 0 <= worker_id < num_workers and "
                        "num_groups dividing num_workers; got worker " +
                            std::to_string(worker_id) + " of " + std::to_string(num_workers) +
                            " in " + std::to_string(num_groups) + " groups");
  }
  auto ctx = std::make_unique<WorkerContext>();
  ctx->worker_id = worker_id;
  ctx->num_workers = num_workers;
  ctx->num_groups = num_groups;
  ctx->local_worker_id = local_worker_id;
  t_worker = std::move(ctx);
}

}  // namespace

WorkerContext* CurrentWorkerOrNull() { return t_worker.get(); }

WorkerContext& CurrentWorker(const char* what) {
  if (!t_worker) {
    backend::ThrowError(
        "RuntimeError",
        std::string(what) +
            " can only run on a Disco worker (a function called through a Disco session, e.g. "
            "inside a VM module loaded with session.load_vm_module), not in the controller");
  }
  return *t_worker;
}

void RegisterWorkerContextFunctions() {
  backend::SetGlobalFunction("tvm_runtime.disco.enter_worker", EnterWorker);
  backend::SetGlobalFunction("tvm_runtime.disco.leave_worker", [] { t_worker.reset(); });
  backend::SetGlobalFunction("tvm_runtime.disco.worker_failed", [](ffi::String reason) {
    // Peers blocked in a collective with us must not wait for a worker that stopped.
    if (t_worker && t_worker->cpu) t_worker->cpu->Abort(std::string(reason));
  });
  backend::SetGlobalFunction("tvm_runtime.disco.worker_info", [] {
    const WorkerContext& w = CurrentWorker("tvm_runtime.disco.worker_info");
    return ffi::Shape({w.worker_id, w.num_workers, w.num_groups, w.local_worker_id});
  });
  backend::SetGlobalFunction("tvm_runtime.disco.set_ccl", [](ffi::String ccl, DLDevice device) {
    WorkerContext& w = CurrentWorker("tvm_runtime.disco.set_ccl");
    w.ccl = std::string(ccl);
    w.default_device = device;
  });
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime
