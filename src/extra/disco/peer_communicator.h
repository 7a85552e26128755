/*
 * The cpu collectives written once over a point-to-point Transport (transport.h): a ring for
 * allreduce (reduce-scatter, then allgather of the reduced parts) and allgather, a binomial tree
 * rooted at rank 0 for broadcast, direct transfers for scatter, gather and send/recv.  TCP is
 * its transport between machines; ranks on one machine use ShmCommunicator instead, whose single
 * barrier per round beats any message passing through the kernel.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_PEER_COMMUNICATOR_H_
#define TVM_RUNTIME_EXTRA_DISCO_PEER_COMMUNICATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "communicator.h"
#include "transport.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

class PeerCommunicator final : public Communicator {
 public:
  explicit PeerCommunicator(std::unique_ptr<Transport> transport);

  TVM_RUNTIME_DISCO_COMMUNICATOR_OVERRIDES;
  void Abort(const std::string& reason) noexcept override { transport_->Abort(reason); }

 private:
  /* Ring allreduce of `count` elements in place in `acc`. */
  void RingAllReduce(char* acc, int64_t count, DLDataType dtype, ReduceKind kind);
  void Exchange(std::vector<Transfer>* transfers, const char* what) {
    transport_->Exchange(transfers->data(), static_cast<int>(transfers->size()), what);
  }
  /* [lo, hi) of part p when n elements are split between the ranks. */
  void Part(int64_t n, int p, int64_t* lo, int64_t* hi) const;

  std::unique_ptr<Transport> transport_;
};

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_PEER_COMMUNICATOR_H_
