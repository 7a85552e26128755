/*
 * A communicator of the cpu collective library: `size` ranks (Disco workers) that run the same
 * sequence of collectives, each with its own buffers.  Buffers are host memory; every size is in
 * bytes (or elements for AllReduce) and the same on every rank, as NCCL requires.  Root-based
 * operations use rank 0 of the communicator (worker 0 of the group or of the session).
 *
 * Two implementations: ShmCommunicator (every rank on this machine: threads or processes share a
 * memory segment, one barrier per round) and PeerCommunicator (the algorithms written once over a
 * point-to-point Transport; TcpTransport connects ranks on several machines).  Both wait without
 * a controller round trip, and both turn a peer that died, failed or closed its end into a
 * PeerFailure (peer_failure.h) naming that Disco worker instead of waiting forever.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_COMMUNICATOR_H_
#define TVM_RUNTIME_EXTRA_DISCO_COMMUNICATOR_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reduce.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

class Communicator {
 public:
  /* `workers[r]` is the Disco worker id of rank r (for messages); `rank` is ours. */
  Communicator(std::vector<int> workers, int rank) : workers_(std::move(workers)), rank_(rank) {}
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(workers_.size()); }
  int worker_of(int rank) const { return workers_[rank]; }

  /* recv[i] = reduce over ranks of send[i], on every rank (recv may be send). */
  virtual void AllReduce(const void* send, void* recv, int64_t count, DLDataType dtype,
                         ReduceKind kind) = 0;
  /* recv = the `bytes` of every rank's send, in rank order. */
  virtual void AllGather(const void* send, void* recv, int64_t bytes) = 0;
  /* recv = rank 0's send (send is read on rank 0 only; it may be recv). */
  virtual void Broadcast(const void* send, void* recv, int64_t bytes) = 0;
  /* recv = part `rank` of rank 0's send (size * bytes, read on rank 0 only). */
  virtual void Scatter(const void* send, void* recv, int64_t bytes) = 0;
  /* rank 0's recv (size * bytes) = every rank's send in rank order. */
  virtual void Gather(const void* send, void* recv, int64_t bytes) = 0;
  /* Point to point: blocks until `peer` received it. */
  virtual void Send(const void* buf, int64_t bytes, int peer) = 0;
  virtual void Recv(void* buf, int64_t bytes, int peer) = 0;
  /* Wakes every rank waiting in this communicator with an error carrying `reason`. */
  virtual void Abort(const std::string& reason) noexcept = 0;

 protected:
  std::vector<int> workers_;
  int rank_;
};

// Bytes of one element of `dtype` (vector lanes included; sub-byte types round up).
inline int64_t ElemBytes(DLDataType dtype) { return (dtype.bits * dtype.lanes + 7) / 8; }

/* The declarations of the collectives and point-to-point calls a Communicator defines in its
 * .cc (Abort, often inline, is written out). */
#define TVM_RUNTIME_DISCO_COMMUNICATOR_OVERRIDES                                                 \
  void AllReduce(const void* send, void* recv, int64_t count, DLDataType dtype, ReduceKind kind) \
      override;                                                                                  \
  void AllGather(const void* send, void* recv, int64_t bytes) override;                          \
  void Broadcast(const void* send, void* recv, int64_t bytes) override;                          \
  void Scatter(const void* send, void* recv, int64_t bytes) override;                            \
  void Gather(const void* send, void* recv, int64_t bytes) override;                             \
  void Send(const void* buf, int64_t bytes, int peer) override;                                  \
  void Recv(void* buf, int64_t bytes, int peer) override

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_COMMUNICATOR_H_
