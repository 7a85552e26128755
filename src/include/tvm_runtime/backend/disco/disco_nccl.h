/*
 * Disco's collectives on GPUs through an NCCL-compatible library: the runtime.disco.<ccl>.*
 * functions of apache-tvm 0.27 (ccl = "nccl" in tvm-runtime-cuda, "rccl" in tvm-runtime-rocm),
 * which the worker-side runtime.disco.allreduce & co. dispatch to after
 * session.init_ccl("nccl", *device_ids).
 *
 * Initialisation is driven by the controller: it calls runtime.disco.<ccl>.get_unique_id() in
 * its own process and passes the id to every worker's init_ccl_per_worker(device_ids, id).  Each
 * worker makes device_ids[its index on its node] current, creates its communicator for the whole
 * session (and, with several groups, one for its group with ncclCommSplit), and from then on
 * allocates on that GPU by default.  Collectives are queued on the device's current stream (the
 * one compiled kernels use), so they run in program order with the model's kernels;
 * sync_worker waits for that stream.
 *
 * The worker's identity comes from tvm-runtime-extra (Disco) through its private globals
 * tvm_runtime.disco.worker_info / set_ccl, so a GPU backend never links the extra wheel.
 */
#ifndef TVM_RUNTIME_BACKEND_DISCO_DISCO_NCCL_H_
#define TVM_RUNTIME_BACKEND_DISCO_DISCO_NCCL_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/disco/nccl_api.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <cstring>
#include <memory>
#include <string>

namespace tvm_runtime {
namespace backend {
namespace nccl {

/* What a GPU backend supplies. */
struct DiscoNcclConfig {
  const char* ccl;                  // "nccl" or "rccl": the runtime.disco.<ccl>.* prefix
  int device_type;                  // kDLCUDA or kDLROCM
  const NcclLibrary& (*library)();  // opens the library on first use
};

/* One worker's communicators (thread-local: Disco workers may be threads of one process). */
struct WorkerComms {
  const DiscoNcclConfig* cfg = nullptr;
  const NcclApi* api = nullptr;
  int worker_id = 0;
  int num_workers = 1;
  int group_size = 1;
  int device_id = 0;
  Comm world = nullptr;
  Comm group = nullptr;  // == world with a single group

  ~WorkerComms() {
    if (group != nullptr && group != world) api->CommDestroy(group);
    if (world != nullptr) api->CommDestroy(world);
  }
};

inline thread_local std::unique_ptr<WorkerComms> t_worker_comms;

[[noreturn]] inline void Fail(const std::string& kind, const std::string& message) {
  ThrowError(kind.c_str(), message);
}

inline void Check(const WorkerComms& w, Result r, const char* call) {
  if (r != 0) {
    Fail("RuntimeError", std::string(w.cfg->ccl) + ": " + call + " failed: " +
                             w.api->GetErrorString(r) + " (error " + std::to_string(r) + ")");
  }
}

inline const NcclApi& Api(const DiscoNcclConfig& cfg) {
  const NcclLibrary& lib = cfg.library();
  if (lib.api == nullptr) Fail("RuntimeError", lib.failure);
  return *lib.api;
}

inline const TVMRuntimeDeviceAPI& DeviceApi(int device_type) {
  const TVMRuntimeDeviceAPI* api = TVMRuntimeGetDeviceAPI(device_type);
  if (api == nullptr) {
    Fail("RuntimeError", "no backend serves device type " + std::to_string(device_type));
  }
  return *api;
}

/* The calling worker's communicators; the GPU made current for what follows. */
inline WorkerComms& Current(const DiscoNcclConfig& cfg, const char* func) {
  WorkerComms* w = t_worker_comms.get();
  if (w == nullptr || w->cfg != &cfg) {
    Fail("RuntimeError",
         std::string("runtime.disco.") + cfg.ccl + "." + func + ": this worker has no " + cfg.ccl +
             " communicator; call session.init_ccl(\"" + cfg.ccl + "\", *device_ids) first");
  }
  const TVMRuntimeDeviceAPI& dev = DeviceApi(cfg.device_type);
  CheckCall(dev.set_device(dev.self, w->device_id));
  return *w;
}

inline void* Stream(const WorkerComms& w) {
  return TVMFFIEnvGetStream(w.cfg->device_type, w.device_id);
}

inline DataType AsNcclType(DLDataType t, const char* func) {
  if (t.lanes == 1) {
    if (t.code == kDLInt && t.bits == 8) return kInt8;
    if (t.code == kDLUInt && t.bits == 8) return kUint8;
    if (t.code == kDLInt && t.bits == 32) return kInt32;
    if (t.code == kDLUInt && t.bits == 32) return kUint32;
    if (t.code == kDLInt && t.bits == 64) return kInt64;
    if (t.code == kDLUInt && t.bits == 64) return kUint64;
    if (t.code == kDLFloat && t.bits == 16) return kFloat16;
    if (t.code == kDLFloat && t.bits == 32) return kFloat32;
    if (t.code == kDLFloat && t.bits == 64) return kFloat64;
    if (t.code == kDLBfloat && t.bits == 16) return kBfloat16;
    if (t.bits == 8) return kUint8;  // float8 variants move as bytes (never reduced)
  }
  Fail("ValueError", std::string(func) + ": dtype " +
                         std::string(::tvm::ffi::DLDataTypeToString(t)) +
                         " cannot be moved by NCCL");
}

inline int64_t Numel(const ::tvm::ffi::Tensor& t) {
  int64_t n = 1;
  for (int64_t d : t.shape()) n *= d;
  return n;
}

inline int64_t ElemBytes(DLDataType t) { return (t.bits * t.lanes + 7) / 8; }

inline char* Data(const WorkerComms& w, const ::tvm::ffi::Tensor& t, const char* func) {
  const DLTensor* d = t.GetDLTensorPtr();
  if (d->device.device_type != w.cfg->device_type || d->device.device_id != w.device_id) {
    Fail("ValueError", std::string(func) + ": the tensor is on device type " +
                           std::to_string(d->device.device_type) + ":" +
                           std::to_string(d->device.device_id) + ", not on this worker's GPU " +
                           std::to_string(w.device_id) +
                           " (allocate with session.empty after init_ccl)");
  }
  return static_cast<char*>(d->data) + d->byte_offset;
}

inline Comm CommOf(const WorkerComms& w, bool in_group) { return in_group ? w.group : w.world; }
inline int SizeOf(const WorkerComms& w, bool in_group) {
  return in_group ? w.group_size : w.num_workers;
}
inline bool IsRoot(const WorkerComms& w, bool in_group) {
  return in_group ? w.worker_id % w.group_size == 0 : w.worker_id == 0;
}

inline void RequireNumel(int64_t got, int64_t want, const char* func, const char* what) {
  if (got != want) {
    Fail("ValueError", std::string(func) + ": " + what + " has " + std::to_string(got) +
                           " elements, expected " + std::to_string(want));
  }
}

inline ::tvm::ffi::Bytes GetUniqueId(const DiscoNcclConfig& cfg) {
  const NcclApi& api = Api(cfg);
  UniqueId id;
  Result r = api.GetUniqueId(&id);
  if (r != 0) {
    Fail("RuntimeError",
         std::string(cfg.ccl) + ": ncclGetUniqueId failed: " + api.GetErrorString(r));
  }
  return ::tvm::ffi::Bytes(id.internal, kUniqueIdBytes);
}

inline void InitPerWorker(const DiscoNcclConfig& cfg, ::tvm::ffi::Shape device_ids,
                          ::tvm::ffi::Bytes unique_id) {
  static const auto worker_info = ::tvm::ffi::Function::GetGlobal("tvm_runtime.disco.worker_info");
  static const auto set_ccl = ::tvm::ffi::Function::GetGlobal("tvm_runtime.disco.set_ccl");
  if (!worker_info.has_value() || !set_ccl.has_value()) {
    Fail("RuntimeError", std::string(cfg.ccl) +
                             " collectives need Disco, which ships in "
                             "tvm-runtime-extra: pip install tvm-runtime-extra");
  }
  if (unique_id.size() != static_cast<size_t>(kUniqueIdBytes)) {
    Fail("ValueError",
         std::string("runtime.disco.") + cfg.ccl + ".init_ccl_per_worker: the unique id has " +
             std::to_string(unique_id.size()) + " bytes, not " + std::to_string(kUniqueIdBytes));
  }
  ::tvm::ffi::Shape info = (*worker_info)().cast<::tvm::ffi::Shape>();
  int worker_id = static_cast<int>(info[0]), num_workers = static_cast<int>(info[1]);
  int num_groups = static_cast<int>(info[2]), local = static_cast<int>(info[3]);
  if (local >= static_cast<int>(device_ids.size())) {
    Fail("ValueError", std::string("init_ccl(\"") + cfg.ccl + "\"): worker " +
                           std::to_string(worker_id) + " is worker " + std::to_string(local) +
                           " of its node but only " + std::to_string(device_ids.size()) +
                           " device ids were given");
  }
  const NcclApi& api = Api(cfg);
  auto w = std::make_unique<WorkerComms>();
  w->cfg = &cfg;
  w->api = &api;
  w->worker_id = worker_id;
  w->num_workers = num_workers;
  w->group_size = num_workers / num_groups;
  w->device_id = static_cast<int>(device_ids[local]);
  const TVMRuntimeDeviceAPI& dev = DeviceApi(cfg.device_type);
  CheckCall(dev.set_device(dev.self, w->device_id));
  UniqueId id;
  std::memcpy(id.internal, unique_id.data(), kUniqueIdBytes);
  t_worker_comms.reset();  // a previous communicator of this worker goes first
  Check(*w, api.CommInitRank(&w->world, num_workers, id, worker_id), "ncclCommInitRank");
  if (num_groups == 1) {
    w->group = w->world;
  } else {
    if (api.CommSplit == nullptr) {
      Fail("RuntimeError", std::string(cfg.ccl) + " " + std::to_string(num_groups) +
                               " groups need ncclCommSplit (NCCL 2.18 or newer)");
    }
    Check(*w,
          api.CommSplit(w->world, worker_id / w->group_size, worker_id % w->group_size, &w->group,
                        nullptr),
          "ncclCommSplit");
  }
  (*set_ccl)(::tvm::ffi::String(cfg.ccl),
             DLDevice{static_cast<DLDeviceType>(cfg.device_type), w->device_id});
  t_worker_comms = std::move(w);
}

inline RedOp AsRedOp(int kind) {
  // apache-tvm's ReduceKind: sum prod min max avg.
  static const RedOp ops[] = {kSum, kProd, kMin, kMax, kAvg};
  if (kind < 0 || kind > 4) Fail("ValueError", "unknown ReduceKind " + std::to_string(kind));
  return ops[kind];
}

inline void CheckPeer(const WorkerComms& w, int peer, const char* func) {
  if (peer < 0 || peer >= w.num_workers || peer == w.worker_id) {
    Fail("ValueError", std::string(func) + ": worker " + std::to_string(w.worker_id) +
                           " cannot exchange with worker " + std::to_string(peer) + " (there are " +
                           std::to_string(w.num_workers) + " workers)");
  }
}

/* An ncclGroupStart..ncclGroupEnd bracket that is always closed: NCCL's group state is per
 * thread, so a send or recv that fails inside it and throws would otherwise leave this worker's
 * thread in the group, and every later collective of the worker would be queued into it and
 * never run.  End() reports ncclGroupEnd's failure; the destructor (on the error path) ends the
 * group quietly, since the error already being thrown is the one that says what went wrong. */
class Group {
 public:
  explicit Group(const WorkerComms& w) : w_(w) {
    Check(w_, w_.api->GroupStart(), "ncclGroupStart");
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() {
    if (open_) w_.api->GroupEnd();
  }
  void End() {
    open_ = false;
    Check(w_, w_.api->GroupEnd(), "ncclGroupEnd");
  }

 private:
  const WorkerComms& w_;
  bool open_ = true;
};

/* Point to point with another worker of the session (a group of one, as 0.27 issues it). */
inline void PointToPoint(const DiscoNcclConfig& cfg, const ::tvm::ffi::Tensor& buffer, int peer,
                         bool send) {
  const char* f = send ? "send_to_worker" : "recv_from_worker";
  WorkerComms& w = Current(cfg, f);
  CheckPeer(w, peer, f);
  char* data = Data(w, buffer, f);
  DataType t = AsNcclType(buffer.dtype(), f);
  Group group(w);
  Check(w,
        send ? w.api->Send(data, Numel(buffer), t, peer, w.world, Stream(w))
             : w.api->Recv(data, Numel(buffer), t, peer, w.world, Stream(w)),
        send ? "ncclSend" : "ncclRecv");
  group.End();
}

/* Worker 0 of the communicator sends part i of `parts` to rank i (scatter) or receives it from
 * rank i (gather); every rank, worker 0 included, moves its own `own` with worker 0. */
inline void RootParts(const DiscoNcclConfig& cfg, const char* f, bool scatter, bool in_group,
                      const ::tvm::ffi::Optional<::tvm::ffi::Tensor>& parts,
                      const ::tvm::ffi::Tensor& own) {
  WorkerComms& w = Current(cfg, f);
  int n = SizeOf(w, in_group);
  DataType t = AsNcclType(own.dtype(), f);
  int64_t count = Numel(own);
  Comm comm = CommOf(w, in_group);
  auto move = [&](bool send, char* buf, int peer) {
    Check(w,
          send ? w.api->Send(buf, count, t, peer, comm, Stream(w))
               : w.api->Recv(buf, count, t, peer, comm, Stream(w)),
          send ? "ncclSend" : "ncclRecv");
  };
  // Every argument is checked before the group opens, so a bad one never leaves it open.
  char* whole = nullptr;
  if (IsRoot(w, in_group)) {
    if (!parts.has_value())
      Fail("ValueError", std::string(f) + ": worker 0 needs the whole buffer");
    RequireNumel(Numel(*parts), count * n, f, "the whole buffer");
    whole = Data(w, *parts, f);
  }
  char* mine = Data(w, own, f);
  Group group(w);
  if (whole != nullptr) {
    for (int i = 0; i < n; ++i) move(scatter, whole + i * count * ElemBytes(own.dtype()), i);
  }
  move(!scatter, mine, 0);
  group.End();
}

/* Registers runtime.disco.<ccl>.* for `cfg` (which must outlive the process). */
inline void RegisterDiscoNccl(const DiscoNcclConfig* cfg) {
  using ::tvm::ffi::Optional;
  using ::tvm::ffi::Tensor;
  const std::string p = std::string("runtime.disco.") + cfg->ccl + ".";
  ::tvm::ffi::reflection::GlobalDef()
      .def((p + "get_unique_id").c_str(), [cfg] { return GetUniqueId(*cfg); })
      .def((p + "init_ccl_per_worker").c_str(),
           [cfg](::tvm::ffi::Shape ids, ::tvm::ffi::Bytes id) { InitPerWorker(*cfg, ids, id); })
      .def((p + "allreduce").c_str(),
           [cfg](Tensor send, int kind, bool in_group, Tensor recv) {
             const char* f = "allreduce";
             WorkerComms& w = Current(*cfg, f);
             RequireNumel(Numel(recv), Numel(send), f, "recv");
             DLDataType t = send.dtype();
             if (t.bits == 8 && t.code != kDLInt && t.code != kDLUInt) {
               Fail("ValueError", "allreduce: float8 tensors cannot be reduced by NCCL");
             }
             Check(
                 w,
                 w.api->AllReduce(Data(w, send, f), Data(w, recv, f), Numel(send), AsNcclType(t, f),
                                  AsRedOp(kind), CommOf(w, in_group), Stream(w)),
                 "ncclAllReduce");
           })
      .def((p + "allgather").c_str(),
           [cfg](Tensor send, bool in_group, Tensor recv) {
             const char* f = "allgather";
             WorkerComms& w = Current(*cfg, f);
             RequireNumel(Numel(recv), Numel(send) * SizeOf(w, in_group), f, "recv");
             Check(w,
                   w.api->AllGather(Data(w, send, f), Data(w, recv, f), Numel(send),
                                    AsNcclType(send.dtype(), f), CommOf(w, in_group), Stream(w)),
                   "ncclAllGather");
           })
      .def((p + "broadcast_from_worker0").c_str(),
           [cfg](Optional<Tensor> send, bool in_group, Tensor recv) {
             const char* f = "broadcast_from_worker0";
             WorkerComms& w = Current(*cfg, f);
             const void* src = nullptr;
             if (IsRoot(w, in_group)) {
               if (!send.has_value())
                 Fail("ValueError", "broadcast_from_worker0: worker 0 needs send");
               RequireNumel(Numel(*send), Numel(recv), f, "send");
               src = Data(w, *send, f);
             }
             Check(w,
                   w.api->Broadcast(src, Data(w, recv, f), Numel(recv), AsNcclType(recv.dtype(), f),
                                    0, CommOf(w, in_group), Stream(w)),
                   "ncclBroadcast");
           })
      .def((p + "scatter_from_worker0").c_str(),
           [cfg](Optional<Tensor> send, bool in_group, Tensor recv) {
             RootParts(*cfg, "scatter_from_worker0", true, in_group, send, recv);
           })
      .def((p + "gather_to_worker0").c_str(),
           [cfg](Tensor send, bool in_group, Optional<Tensor> recv) {
             RootParts(*cfg, "gather_to_worker0", false, in_group, recv, send);
           })
      .def((p + "send_to_worker").c_str(),
           [cfg](Tensor buffer, int peer) { PointToPoint(*cfg, buffer, peer, true); })
      .def((p + "recv_from_worker").c_str(),
           [cfg](Tensor buffer, int peer) { PointToPoint(*cfg, buffer, peer, false); })
      .def((p + "recv_from_worker0").c_str(),
           [cfg](Tensor buffer) { PointToPoint(*cfg, buffer, 0, false); })
      .def((p + "send_to_next_group").c_str(),
           [cfg](Tensor buffer) {
             WorkerComms& w = Current(*cfg, "send_to_next_group");
             PointToPoint(*cfg, buffer, w.worker_id + w.group_size, true);
           })
      .def((p + "recv_from_prev_group").c_str(),
           [cfg](Tensor buffer) {
             WorkerComms& w = Current(*cfg, "recv_from_prev_group");
             PointToPoint(*cfg, buffer, w.worker_id - w.group_size, false);
           })
      .def((p + "sync_worker").c_str(), [cfg] {
        WorkerComms& w = Current(*cfg, "sync_worker");
        const TVMRuntimeDeviceAPI& dev = DeviceApi(cfg->device_type);
        CheckCall(dev.stream_sync(dev.self, w.device_id, Stream(w)));
      });
}

}  // namespace nccl
}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_DISCO_DISCO_NCCL_H_
