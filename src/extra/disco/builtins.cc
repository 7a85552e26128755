/*
 * The worker-side functions of apache-tvm 0.27's Disco that compiled code and sessions call by
 * name, with 0.27's calling conventions:
 *
 *   runtime.disco.allreduce(send, Shape([kind]), in_group, recv)     kind: 0 sum .. 4 avg
 *   runtime.disco.allgather(send, in_group, recv)
 *   runtime.disco.broadcast_from_worker0(send, in_group, recv)
 *   runtime.disco.scatter_from_worker0(send or None, in_group, recv)
 *   runtime.disco.gather_to_worker0(send, in_group, recv or None)
 *   runtime.disco.recv_from_worker0(buffer), send_to_worker(buffer, id), recv_from_worker(buffer,
 *   id), send_to_next_group(buffer), recv_from_prev_group(buffer)
 *   runtime.disco.worker_id() -> Shape([id]); worker_rank() -> int; world_size() -> int;
 *   device() -> Device; empty(shape, dtype, device, worker0_only, in_group) -> Tensor or None;
 *   bind_worker_to_cpu_core(Shape cpu_ids)
 *
 * Collectives go to the worker's collective library: runtime.disco.<ccl>.<name> ("cpu" unless
 * the session called init_ccl("nccl"/"rccl")).  The worker's identity comes from its context
 * (worker_context.h); outside a worker these functions say so.
 */
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>

#include <string>
#include <unordered_map>

#include "../extra_register.h"
#include "worker_context.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

namespace ffi = ::tvm::ffi;

namespace {

/* runtime.disco.<ccl>.<name> of the calling worker (looked up once per thread and CCL). */
const ffi::Function& CclFunction(const char* name) {
  WorkerContext& w = CurrentWorker(name);
  thread_local std::unordered_map<std::string, ffi::Function> cache;
  std::string key = "runtime.disco." + w.ccl + "." + name;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto f = ffi::Function::GetGlobal(key);
  if (!f.has_value()) {
    backend::ThrowError("RuntimeError",
                        "runtime.disco." + std::string(name) + ": the '" + w.ccl +
                            "' collective library of this worker does not provide " + key +
                            "; is the wheel that provides it installed and loaded? (`python -m "
                            "tvm.backend` shows the status of every backend)");
  }
  return cache.emplace(key, *f).first->second;
}

int64_t ReduceKindFromShape(const ffi::Shape& kind) {
  if (kind.size() != 1 || kind[0] < 0 || kind[0] > 4) {
    backend::ThrowError("ValueError",
                        "runtime.disco.allreduce: the reduce kind is Shape([k]) with k in 0..4 "
                        "(sum, prod, min, max, avg)");
  }
  return kind[0];
}

ffi::Optional<ffi::Tensor> Empty(ffi::Shape shape, DLDataType dtype, ffi::Optional<DLDevice> device,
                                 bool worker0_only, bool in_group) {
  WorkerContext& w = CurrentWorker("runtime.disco.empty");
  if (worker0_only && !w.IsRoot(in_group)) return std::nullopt;
  static const ffi::Function alloc =
      ffi::Function::GetGlobalRequired("runtime.TVMTensorAllocWithScope");
  return alloc(shape, dtype, device.value_or(w.default_device), nullptr).cast<ffi::Tensor>();
}

void BindWorkerToCpuCore(ffi::Shape cpu_ids) {
  WorkerContext& w = CurrentWorker("runtime.disco.bind_worker_to_cpu_core");
  if (w.worker_id >= static_cast<int>(cpu_ids.size())) {
    backend::ThrowError("ValueError",
                        "runtime.disco.bind_worker_to_cpu_core: " + std::to_string(cpu_ids.size()) +
                            " CPU ids for worker " + std::to_string(w.worker_id) +
                            " (one per worker, indexed by worker id)");
  }
  static const ffi::Function pin =
      ffi::Function::GetGlobalRequired("tvm.runtime.threading.set_current_thread_affinity");
  pin(ffi::Shape({cpu_ids[w.worker_id]}));
}

}  // namespace

void RegisterDiscoBuiltins() {
  using backend::SetGlobalFunction;
  SetGlobalFunction("runtime.disco.allreduce",
                    [](ffi::Tensor send, ffi::Shape kind, bool in_group, ffi::Tensor recv) {
                      CclFunction("allreduce")(send, ReduceKindFromShape(kind), in_group, recv);
                    });
  SetGlobalFunction("runtime.disco.allgather",
                    [](ffi::Tensor send, bool in_group, ffi::Tensor recv) {
                      CclFunction("allgather")(send, in_group, recv);
                    });
  SetGlobalFunction("runtime.disco.broadcast_from_worker0",
                    [](ffi::Optional<ffi::Tensor> send, bool in_group, ffi::Tensor recv) {
                      CclFunction("broadcast_from_worker0")(send, in_group, recv);
                    });
  SetGlobalFunction("runtime.disco.scatter_from_worker0",
                    [](ffi::Optional<ffi::Tensor> send, bool in_group, ffi::Tensor recv) {
                      CclFunction("scatter_from_worker0")(send, in_group, recv);
                    });
  SetGlobalFunction("runtime.disco.gather_to_worker0",
                    [](ffi::Tensor send, bool in_group, ffi::Optional<ffi::Tensor> recv) {
                      CclFunction("gather_to_worker0")(send, in_group, recv);
                    });
  SetGlobalFunction("runtime.disco.recv_from_worker0",
                    [](ffi::Tensor buffer) { CclFunction("recv_from_worker0")(buffer); });
  SetGlobalFunction("runtime.disco.send_to_next_group",
                    [](ffi::Tensor buffer) { CclFunction("send_to_next_group")(buffer); });
  SetGlobalFunction("runtime.disco.recv_from_prev_group",
                    [](ffi::Tensor buffer) { CclFunction("recv_from_prev_group")(buffer); });
  SetGlobalFunction("runtime.disco.send_to_worker", [](ffi::Tensor buffer, int receiver) {
    CclFunction("send_to_worker")(buffer, receiver);
  });
  SetGlobalFunction("runtime.disco.recv_from_worker", [](ffi::Tensor buffer, int sender) {
    CclFunction("recv_from_worker")(buffer, sender);
  });
  SetGlobalFunction("runtime.disco.worker_id", [] {
    return ffi::Shape({CurrentWorker("runtime.disco.worker_id").worker_id});
  });
  SetGlobalFunction("runtime.disco.worker_rank", [] {
    return static_cast<int64_t>(CurrentWorker("runtime.disco.worker_rank").worker_id);
  });
  SetGlobalFunction("runtime.disco.world_size", [] {
    return static_cast<int64_t>(CurrentWorker("runtime.disco.world_size").num_workers);
  });
  SetGlobalFunction("runtime.disco.device",
                    [] { return CurrentWorker("runtime.disco.device").default_device; });
  SetGlobalFunction("runtime.disco.empty", Empty);
  SetGlobalFunction("runtime.disco.bind_worker_to_cpu_core", BindWorkerToCpuCore);
  // What the worker loop runs before it answers "sync": the CCL's pending work is done.
  SetGlobalFunction("tvm_runtime.disco.sync_worker", [] {
    WorkerContext* w = CurrentWorkerOrNull();
    if (w != nullptr && !w->ccl.empty()) CclFunction("sync_worker")();
  });
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime
