/*
 * The TCP transport of the cpu collectives, for ranks on several machines: every pair of Disco
 * workers holds one non-blocking TCP connection (the "mesh", set up once when the session
 * starts).  Every message carries a 16-byte header (magic, operation, size); a connection that
 * closes names the worker at its other end.  The collectives themselves are PeerCommunicator's.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_TCP_TRANSPORT_H_
#define TVM_RUNTIME_EXTRA_DISCO_TCP_TRANSPORT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "transport.h"

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

/* The ranks `mesh_ranks` of `mesh` as a transport (in communicator order); we are
 * mesh_ranks[rank].  Several transports (the session's and its group's) share one mesh. */
class TcpTransport final : public Transport {
 public:
  TcpTransport(std::shared_ptr<TcpMesh> mesh, std::vector<int> mesh_ranks, int rank)
      : mesh_(std::move(mesh)), mesh_ranks_(std::move(mesh_ranks)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(mesh_ranks_.size()); }
  int worker_of(int rank) const override { return mesh_->worker_of(mesh_ranks_[rank]); }
  void Exchange(Transfer* transfers, int count, const char* what) override;
  void Abort(const std::string& reason) noexcept override { mesh_->Abort(reason); }

 private:
  std::shared_ptr<TcpMesh> mesh_;
  std::vector<int> mesh_ranks_;
  int rank_;
};

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_TCP_TRANSPORT_H_
