/*
 * A point-to-point transport between the ranks of a communicator: what the collectives of
 * PeerCommunicator (peer_communicator.h) are written against, the way gloo's algorithms are
 * written against its transport pairs.  A collective step is a handful of transfers (a ring step
 * sends to the next rank while it receives from the previous one); Exchange moves them forward
 * together, without ordering between them, so neither side of a ring waits for the other.
 *
 * A transport frames every message with its operation and size, so ranks that run different
 * programs fail with a message instead of reading garbage, and throws PeerFailure (naming the
 * worker) when the other end is gone or the transport was aborted.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_TRANSPORT_H_
#define TVM_RUNTIME_EXTRA_DISCO_TRANSPORT_H_

#include <cstdint>
#include <string>

namespace tvm_runtime {
namespace extra {
namespace disco {

/* Which collective a message belongs to (checked by the receiver). */
enum class Op : uint32_t {
  kAllReduce = 1,
  kAllGather = 2,
  kBroadcast = 3,
  kScatter = 4,
  kGather = 5,
  kPointToPoint = 6
};

/* The name users know the operation by. */
inline const char* OpName(Op op) {
  switch (op) {
    case Op::kAllReduce:
      return "allreduce";
    case Op::kAllGather:
      return "allgather";
    case Op::kBroadcast:
      return "broadcast_from_worker0";
    case Op::kScatter:
      return "scatter_from_worker0";
    case Op::kGather:
      return "gather_to_worker0";
    case Op::kPointToPoint:
      return "send/recv";
  }
  return "an unknown operation";
}

/* One message to or from rank `peer` of the transport. */
struct Transfer {
  int peer;
  bool send;
  char* data;
  int64_t bytes;
  Op op;
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /* The Disco worker id of rank r, for messages. */
  virtual int worker_of(int rank) const = 0;
  /* Completes every transfer of `transfers` (`what` names the collective in errors). */
  virtual void Exchange(Transfer* transfers, int count, const char* what) = 0;
  /* Fails every exchange in progress or to come, on this rank and its peers, with `reason`. */
  virtual void Abort(const std::string& reason) noexcept = 0;
};

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_TRANSPORT_H_
