/*
 * runtime.disco.cpu.*: the "cpu" collective library (CCL) behind apache-tvm 0.27's collective
 * builtins when the workers compute on the host.  Same functions and calling conventions as
 * 0.27's runtime.disco.nccl.*, so runtime.disco.allreduce & co. dispatch to either alike.
 *
 *   init_ccl_per_worker(token, addresses)  "" addresses: every worker is on this machine, share
 *       memory segments named after `token`; else "host:port" of every worker (comma-separated,
 *       from `prepare`) for the TCP mesh of a multi-machine session.
 *   prepare(host) -> port                    listen for the mesh before the addresses are known.
 */
#include "cpu_ccl.h"

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../extra_register.h"
#include "peer_communicator.h"
#include "peer_failure.h"
#include "shm_communicator.h"
#include "tcp_transport.h"
#include "worker_context.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

namespace ffi = ::tvm::ffi;

namespace {

/* The communicator of a single worker (a session of one, or groups of one). */
class SelfCommunicator final : public Communicator {
 public:
  explicit SelfCommunicator(int worker) : Communicator({worker}, 0) {}
  void AllReduce(const void* send, void* recv, int64_t count, DLDataType dtype,
                 ReduceKind) override {
    Copy(send, recv, count * ((dtype.bits * dtype.lanes + 7) / 8));
  }
  void AllGather(const void* send, void* recv, int64_t bytes) override { Copy(send, recv, bytes); }
  void Broadcast(const void* send, void* recv, int64_t bytes) override { Copy(send, recv, bytes); }
  void Scatter(const void* send, void* recv, int64_t bytes) override { Copy(send, recv, bytes); }
  void Gather(const void* send, void* recv, int64_t bytes) override { Copy(send, recv, bytes); }
  void Send(const void*, int64_t, int) override { SelfTransfer(); }
  void Recv(void*, int64_t, int) override { SelfTransfer(); }
  void Abort(const std::string&) noexcept override {}

 private:
  static void Copy(const void* from, void* to, int64_t bytes) {
    if (from != to && bytes > 0) std::memmove(to, from, bytes);
  }
  [[noreturn]] void SelfTransfer() {
    backend::ThrowError("ValueError", "Disco worker " + std::to_string(worker_of(0)) +
                                          " cannot send to or receive from itself");
  }
};

/* Runs `body`, turning a PeerFailure into the tvm-ffi error kind the worker loop recognises
 * (same message: a RuntimeError to users). */
template <typename F>
void Guarded(F&& body) {
  try {
    body();
  } catch (const PeerFailure& failure) {
    backend::ThrowError(kPeerFailureKind, failure.what());
  }
}

double TimeoutSeconds() {
  const char* env = std::getenv("TVM_DISCO_CCL_TIMEOUT_S");
  double v = env != nullptr ? std::atof(env) : 0;
  return v > 0 ? v : 120.0;
}

std::string ShmName(const std::string& token, const std::string& tag) {
  return "tvm-disco-" + token + "-" + tag;
}

CpuCcl& Ccl(const char* what) {
  WorkerContext& w = CurrentWorker(what);
  if (!w.cpu || !w.cpu->world) {
    backend::ThrowError("RuntimeError", std::string(what) +
                                            ": the cpu collectives of this worker are not "
                                            "initialised (the session does it when it starts)");
  }
  return *w.cpu;
}

/* Checks a tensor the cpu CCL reads or writes; returns its data pointer. */
char* HostData(const ffi::Tensor& t, const char* func, const char* what) {
  const DLTensor* d = t.GetDLTensorPtr();
  int dev = d->device.device_type;
  if (dev != kDLCPU && dev != kDLCUDAHost && dev != kDLROCMHost) {
    backend::ThrowError("ValueError",
                        std::string(func) + ": " + what +
                            " is not in host memory; the cpu collective library moves CPU "
                            "tensors (for GPU workers call session.init_ccl(\"nccl\", ...) or "
                            "init_ccl(\"rccl\", ...))");
  }
  if (!ffi::IsContiguous(*d)) {
    backend::ThrowError("ValueError", std::string(func) + ": " + what + " must be contiguous");
  }
  return static_cast<char*>(d->data) + d->byte_offset;
}

int64_t Numel(const ffi::Tensor& t) {
  int64_t n = 1;
  for (int64_t d : t.shape()) n *= d;
  return n;
}

void RequireSameDType(const ffi::Tensor& a, const ffi::Tensor& b, const char* func) {
  DLDataType x = a.dtype(), y = b.dtype();
  if (x.code != y.code || x.bits != y.bits || x.lanes != y.lanes) {
    backend::ThrowError("ValueError",
                        std::string(func) + ": send is " + std::string(ffi::DLDataTypeToString(x)) +
                            " but recv is " + std::string(ffi::DLDataTypeToString(y)));
  }
}

void RequireNumel(int64_t got, int64_t want, const char* func, const std::string& what) {
  if (got != want) {
    backend::ThrowError("ValueError", std::string(func) + ": " + what + " has " +
                                          std::to_string(got) + " elements, expected " +
                                          std::to_string(want));
  }
}

void AllReduce(ffi::Tensor send, int kind, bool in_group, ffi::Tensor recv) {
  const char* f = "runtime.disco.cpu.allreduce";
  if (kind < 0 || kind > 4) {
    backend::ThrowError("ValueError", std::string(f) + ": unknown ReduceKind " +
                                          std::to_string(kind) + " (0..4: sum prod min max avg)");
  }
  RequireSameDType(send, recv, f);
  RequireNumel(Numel(recv), Numel(send), f, "recv");
  CheckReducible(send.dtype(), f);
  Communicator& c = Ccl(f).Get(in_group);
  Guarded([&] {
    c.AllReduce(HostData(send, f, "send"), HostData(recv, f, "recv"), Numel(send), send.dtype(),
                static_cast<ReduceKind>(kind));
  });
}

void AllGather(ffi::Tensor send, bool in_group, ffi::Tensor recv) {
  const char* f = "runtime.disco.cpu.allgather";
  Communicator& c = Ccl(f).Get(in_group);
  RequireSameDType(send, recv, f);
  RequireNumel(Numel(recv), Numel(send) * c.size(), f, "recv (send times the workers)");
  Guarded([&] {
    c.AllGather(HostData(send, f, "send"), HostData(recv, f, "recv"),
                Numel(send) * ElemBytes(send.dtype()));
  });
}

/* Worker 0's buffer of a rooted collective, checked to hold `parts` times `other`'s elements;
 * nullptr on the other workers (which pass None or a buffer that is not read). */
char* RootBuffer(const Communicator& c, const ffi::Optional<ffi::Tensor>& buffer,
                 const ffi::Tensor& other, int64_t parts, const char* f, const char* name) {
  if (c.rank() != 0) return nullptr;
  if (!buffer.has_value()) {
    backend::ThrowError("ValueError", std::string(f) + ": worker 0 needs " + name);
  }
  RequireSameDType(*buffer, other, f);
  RequireNumel(Numel(*buffer), Numel(other) * parts, f, name);
  return HostData(*buffer, f, name);
}

void BroadcastFromWorker0(ffi::Optional<ffi::Tensor> send, bool in_group, ffi::Tensor recv) {
  const char* f = "runtime.disco.cpu.broadcast_from_worker0";
  Communicator& c = Ccl(f).Get(in_group);
  const char* src = RootBuffer(c, send, recv, 1, f, "send");
  Guarded(
      [&] { c.Broadcast(src, HostData(recv, f, "recv"), Numel(recv) * ElemBytes(recv.dtype())); });
}

void ScatterFromWorker0(ffi::Optional<ffi::Tensor> send, bool in_group, ffi::Tensor recv) {
  const char* f = "runtime.disco.cpu.scatter_from_worker0";
  Communicator& c = Ccl(f).Get(in_group);
  const char* src =
      RootBuffer(c, send, recv, c.size(), f, "send (split evenly between the workers)");
  Guarded(
      [&] { c.Scatter(src, HostData(recv, f, "recv"), Numel(recv) * ElemBytes(recv.dtype())); });
}

void GatherToWorker0(ffi::Tensor send, bool in_group, ffi::Optional<ffi::Tensor> recv) {
  const char* f = "runtime.disco.cpu.gather_to_worker0";
  Communicator& c = Ccl(f).Get(in_group);
  char* dst = RootBuffer(c, recv, send, c.size(), f, "recv (send times the workers)");
  Guarded([&] { c.Gather(HostData(send, f, "send"), dst, Numel(send) * ElemBytes(send.dtype())); });
}

void CheckPeer(const WorkerContext& w, int peer, const char* f) {
  if (peer < 0 || peer >= w.num_workers || peer == w.worker_id) {
    backend::ThrowError("ValueError", std::string(f) + ": worker " + std::to_string(w.worker_id) +
                                          " cannot exchange with worker " + std::to_string(peer) +
                                          " (there are " + std::to_string(w.num_workers) +
                                          " workers)");
  }
}

void PointToPoint(ffi::Tensor buffer, int peer, bool send) {
  const char* f = send ? "runtime.disco.cpu.send_to_worker" : "runtime.disco.cpu.recv_from_worker";
  WorkerContext& w = CurrentWorker(f);
  CheckPeer(w, peer, f);
  char* data = HostData(buffer, f, "buffer");
  int64_t bytes = Numel(buffer) * ElemBytes(buffer.dtype());
  Communicator& world = *Ccl(f).world;
  Guarded([&] {
    if (send) {
      world.Send(data, bytes, peer);
    } else {
      world.Recv(data, bytes, peer);
    }
  });
}

void SendToWorker(ffi::Tensor buffer, int peer) { PointToPoint(buffer, peer, true); }

void RecvFromWorker(ffi::Tensor buffer, int peer) { PointToPoint(buffer, peer, false); }

void SendToNextGroup(ffi::Tensor buffer) {
  WorkerContext& w = CurrentWorker("runtime.disco.cpu.send_to_next_group");
  if (w.worker_id + w.group_size() >= w.num_workers) {
    backend::ThrowError("ValueError", "send_to_next_group: worker " + std::to_string(w.worker_id) +
                                          " is in the last group; there is no next group");
  }
  SendToWorker(buffer, w.worker_id + w.group_size());
}

void RecvFromPrevGroup(ffi::Tensor buffer) {
  WorkerContext& w = CurrentWorker("runtime.disco.cpu.recv_from_prev_group");
  if (w.worker_id < w.group_size()) {
    backend::ThrowError("ValueError", "recv_from_prev_group: worker " +
                                          std::to_string(w.worker_id) +
                                          " is in the first group; there is no previous group");
  }
  RecvFromWorker(buffer, w.worker_id - w.group_size());
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

void InitCclPerWorker(ffi::String token_arg, ffi::String addresses_arg) {
  WorkerContext& w = CurrentWorker("runtime.disco.cpu.init_ccl_per_worker");
  std::string token(token_arg), addresses(addresses_arg);
  auto ccl = w.cpu ? w.cpu : std::make_shared<CpuCcl>();
  ccl->world.reset();
  ccl->group.reset();
  ccl->mesh.reset();
  int gs = w.group_size(), gid = w.group_id();
  std::vector<int> all(w.num_workers), mine(gs);
  for (int i = 0; i < w.num_workers; ++i) all[i] = i;
  for (int i = 0; i < gs; ++i) mine[i] = gid * gs + i;
  double timeout = TimeoutSeconds();
  if (addresses.empty()) {
    if (w.num_workers == 1) {
      ccl->world = std::make_unique<SelfCommunicator>(w.worker_id);
    } else {
      ccl->world =
          std::make_unique<ShmCommunicator>(ShmName(token, "w"), all, w.worker_id, timeout);
    }
    if (w.num_groups > 1) {
      if (gs == 1) {
        ccl->group = std::make_unique<SelfCommunicator>(w.worker_id);
      } else {
        ccl->group = std::make_unique<ShmCommunicator>(ShmName(token, "g" + std::to_string(gid)),
                                                       mine, w.worker_id % gs, timeout);
      }
    }
  } else {
    std::vector<std::string> peers = SplitCommas(addresses);
    if (static_cast<int>(peers.size()) != w.num_workers || ccl->listen_fd < 0) {
      backend::ThrowError("ValueError",
                          "runtime.disco.cpu.init_ccl_per_worker: expected the "
                          "addresses of all " +
                              std::to_string(w.num_workers) +
                              " workers after runtime.disco.cpu.prepare");
    }
    int fd = ccl->listen_fd;
    ccl->listen_fd = -1;  // the mesh closes it
    ccl->mesh = std::make_shared<TcpMesh>(fd, peers, w.worker_id, token, all, timeout);
    ccl->world = std::make_unique<PeerCommunicator>(
        std::make_unique<TcpTransport>(ccl->mesh, all, w.worker_id));
    if (w.num_groups > 1) {
      ccl->group = std::make_unique<PeerCommunicator>(
          std::make_unique<TcpTransport>(ccl->mesh, mine, w.worker_id % gs));
    }
  }
  w.cpu = std::move(ccl);
  w.ccl = "cpu";
}

int64_t Prepare(ffi::String host) {
  WorkerContext& w = CurrentWorker("runtime.disco.cpu.prepare");
  if (!w.cpu) w.cpu = std::make_shared<CpuCcl>();
  if (w.cpu->listen_fd >= 0) ::close(w.cpu->listen_fd);
  int port = 0;
  w.cpu->listen_fd = TcpMesh::Listen(std::string(host), &port);
  return port;
}

}  // namespace

CpuCcl::~CpuCcl() {
  if (listen_fd >= 0) ::close(listen_fd);
}

void CpuCcl::Abort(const std::string& reason) noexcept {
  if (world) world->Abort(reason);
  if (group) group->Abort(reason);
}

void RegisterCpuCclFunctions() {
  using backend::SetGlobalFunction;
  SetGlobalFunction("runtime.disco.cpu.prepare", Prepare);
  SetGlobalFunction("runtime.disco.cpu.init_ccl_per_worker",
                    [](ffi::String token, ffi::String addresses) {
                      // A peer may die while the others wait for it to attach.
                      Guarded([&] { InitCclPerWorker(token, addresses); });
                    });
  SetGlobalFunction("runtime.disco.cpu.allreduce", AllReduce);
  SetGlobalFunction("runtime.disco.cpu.allgather", AllGather);
  SetGlobalFunction("runtime.disco.cpu.broadcast_from_worker0", BroadcastFromWorker0);
  SetGlobalFunction("runtime.disco.cpu.scatter_from_worker0", ScatterFromWorker0);
  SetGlobalFunction("runtime.disco.cpu.gather_to_worker0", GatherToWorker0);
  SetGlobalFunction("runtime.disco.cpu.recv_from_worker0",
                    [](ffi::Tensor buffer) { RecvFromWorker(buffer, 0); });
  SetGlobalFunction("runtime.disco.cpu.send_to_next_group", SendToNextGroup);
  SetGlobalFunction("runtime.disco.cpu.recv_from_prev_group", RecvFromPrevGroup);
  SetGlobalFunction("runtime.disco.cpu.send_to_worker", SendToWorker);
  SetGlobalFunction("runtime.disco.cpu.recv_from_worker", RecvFromWorker);
  SetGlobalFunction("runtime.disco.cpu.sync_worker", [] {});
  // Controller side: a worker died before every worker attached to the segments of a session;
  // wake the ones waiting there.
  SetGlobalFunction(
      "tvm_runtime.disco.abort_shm", [](ffi::String token, int num_groups, ffi::String why) {
        std::string t(token), reason(why);
        bool any = ShmCommunicator::AbortByName(ShmName(t, "w"), reason);
        for (int g = 0; g < num_groups; ++g) {
          any = ShmCommunicator::AbortByName(ShmName(t, "g" + std::to_string(g)), reason) || any;
        }
        return any;
      });
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime
