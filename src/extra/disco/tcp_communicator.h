/*
 * The cpu collectives between ranks on several machines: every pair of Disco workers holds one
 * TCP connection (the "mesh", set up once when the session starts), and the collectives move
 * data peer to peer over it: a ring for allreduce (reduce-scatter then allgather) and allgather,
 * a binomial tree for broadcast, direct transfers for scatter, gather and send/recv.  Every
 * message carries a small header (operation, size) so mismatched programs fail with a message
 * instead of reading garbage; a connection that closes names the worker at its other end.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_TCP_COMMUNICATOR_H_
#define TVM_RUNTIME_EXTRA_DISCO_TCP_COMMUNICATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "communicator.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

/* The connections of one worker to every other worker of the session. */
class TcpMesh {
 public:
  /* A listening socket on `host` (any free port); returns its fd and sets *port. */
  static int Listen(const std::string& host, int* port);

  /* Connects to every lower rank at `addresses[r]` ("host:port") and accepts every higher rank on
   * `listen_fd` (closed afterwards); peers prove they belong to the session with `token`. */
  TcpMesh(int listen_fd, const std::vector<std::string>& addresses, int rank,
          const std::string& token, std::vector<int> workers, double timeout_s);
  ~TcpMesh();

  int fd(int rank) const { return fds_[rank]; }
  int worker_of(int rank) const { return workers_[rank]; }
  /* Closes every connection for reading and writing: peers blocked on us see it at once. */
  void Abort(const std::string& reason) noexcept;
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  std::string reason() const;

 private:
  std::vector<int> fds_;
  std::vector<int> workers_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex mu_;
  std::string reason_;
};

class TcpCommunicator final : public Communicator {
 public:
  /* The ranks `mesh_ranks` of `mesh` (in communicator order); we are mesh_ranks[rank]. */
  TcpCommunicator(std::shared_ptr<TcpMesh> mesh, std::vector<int> mesh_ranks, int rank);

  void AllReduce(const void* send, void* recv, int64_t count, DLDataType dtype,
                 ReduceKind kind) override;
  void AllGather(const void* send, void* recv, int64_t bytes) override;
  void Broadcast(const void* send, void* recv, int64_t bytes) override;
  void Scatter(const void* send, void* recv, int64_t bytes) override;
  void Gather(const void* send, void* recv, int64_t bytes) override;
  void Send(const void* buf, int64_t bytes, int peer) override;
  void Recv(void* buf, int64_t bytes, int peer) override;
  void Abort(const std::string& reason) noexcept override { mesh_->Abort(reason); }

  /* One message to or from a peer of this communicator. */
  struct Transfer {
    int peer;
    bool send;
    char* data;
    int64_t bytes;
    uint32_t tag;
    int64_t done = 0;  // bytes moved, header included
    char header[16] = {};
  };

 private:
  /* Ring allreduce of `count` elements in place in `acc`. */
  void RingAllReduce(char* acc, int64_t count, DLDataType dtype, ReduceKind kind);
  /* Moves every transfer to completion, all at once (no ordering between them). */
  void Run(std::vector<Transfer>* transfers, const char* what);
  void Part(int64_t n, int p, int64_t* lo, int64_t* hi) const;

  std::shared_ptr<TcpMesh> mesh_;
  std::vector<int> mesh_ranks_;
};

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_TCP_COMMUNICATOR_H_
