#include "tcp_communicator.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <tvm_runtime/backend/error.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "worker_context.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

namespace {

constexpr uint32_t kMagic = 0x44564D54;  // "TMVD"
constexpr size_t kTokenBytes = 32;
constexpr int kPollMs = 100;

enum Tag : uint32_t {
  kAllReduce = 1,
  kAllGather = 2,
  kBroadcast = 3,
  kScatter = 4,
  kGather = 5,
  kPointToPoint = 6
};

const char* TagName(uint32_t tag) {
  switch (tag) {
    case kAllReduce:
      return "allreduce";
    case kAllGather:
      return "allgather";
    case kBroadcast:
      return "broadcast_from_worker0";
    case kScatter:
      return "scatter_from_worker0";
    case kGather:
      return "gather_to_worker0";
    case kPointToPoint:
      return "send/recv";
  }
  return "an unknown operation";
}

std::string Worker(int id) { return "Disco worker " + std::to_string(id); }

[[noreturn]] void Fail(const std::string& message) { backend::ThrowError("RuntimeError", message); }

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left.count(), kPollMs)));
}

/* Blocking exact read/write with a deadline (setup only). */
bool ReadExact(int fd, char* buf, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
      if (Clock::now() > deadline) return false;
      continue;
    }
    ssize_t got = ::recv(fd, buf, n, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return false;
    buf += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool WriteExact(int fd, const char* buf, size_t n) {
  while (n > 0) {
    ssize_t put = ::send(fd, buf, n, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    buf += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

void SplitHostPort(const std::string& address, std::string* host, std::string* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) Fail("Disco cpu collectives: bad peer address '" + address + "'");
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
}

int ConnectOnce(const std::string& address) {
  std::string host, port;
  SplitHostPort(address, &host, &port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  return fd;
}

void Hello(char* out, const std::string& token, int rank) {
  std::memcpy(out, &kMagic, 4);
  std::memset(out + 4, 0, kTokenBytes);
  std::memcpy(out + 4, token.data(), std::min(token.size(), kTokenBytes));
  int32_t r = rank;
  std::memcpy(out + 4 + kTokenBytes, &r, 4);
}

void Tune(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

}  // namespace

int TcpMesh::Listen(const std::string& host, int* port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const char* node = host.empty() ? nullptr : host.c_str();
  int rc = ::getaddrinfo(node, "0", &hints, &found);
  if (rc != 0) {
    Fail("Disco cpu collectives: cannot listen on '" + host + "': " + ::gai_strerror(rc));
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd < 0)
    Fail("Disco cpu collectives: cannot listen on '" + host + "': " + std::strerror(errno));
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return fd;
}

TcpMesh::TcpMesh(int listen_fd, const std::vector<std::string>& addresses, int rank,
                 const std::string& token, std::vector<int> workers, double timeout_s)
    : fds_(addresses.size(), -1), workers_(std::move(workers)) {
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  int n = static_cast<int>(addresses.size());
  char hello[4 + kTokenBytes + 4];
  try {
    // Lower ranks: connect (their listen backlog takes us even before they accept).
    for (int r = 0; r < rank; ++r) {
      int fd = -1;
      while ((fd = ConnectOnce(addresses[r])) < 0) {
        if (Clock::now() > deadline) {
          Fail("Disco cpu collectives: " + Worker(workers_[rank]) + " cannot connect to " +
               Worker(workers_[r]) + " at " + addresses[r] + ": " + std::strerror(errno));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      fds_[r] = fd;
      Hello(hello, token, rank);
      if (!WriteExact(fd, hello, sizeof(hello))) {
        Fail("Disco cpu collectives: " + Worker(workers_[r]) + " at " + addresses[r] +
             " closed the connection during setup");
      }
    }
    // Higher ranks: accept; whoever cannot show the session's token is turned away.
    int missing = n - rank - 1;
    while (missing > 0) {
      pollfd p{listen_fd, POLLIN, 0};
      if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
        if (Clock::now() > deadline) {
          Fail("Disco cpu collectives: " + std::to_string(missing) +
               " workers did not connect to " + Worker(workers_[rank]) + " within " +
               std::to_string(static_cast<int>(timeout_s)) +
               " s (is a firewall blocking the workers' ports?)");
        }
        continue;
      }
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      int32_t peer = -1;
      uint32_t magic = 0;
      bool ok = ReadExact(fd, hello, sizeof(hello), deadline);
      if (ok) {
        std::memcpy(&magic, hello, 4);
        std::memcpy(&peer, hello + 4 + kTokenBytes, 4);
        char expected[sizeof(hello)];
        Hello(expected, token, peer);
        ok = magic == kMagic && std::memcmp(hello, expected, sizeof(hello)) == 0 && peer > rank &&
             peer < n && fds_[peer] < 0;
      }
      if (!ok) {
        ::close(fd);
        continue;
      }
      fds_[peer] = fd;
      --missing;
    }
  } catch (...) {
    ::close(listen_fd);
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
    throw;
  }
  ::close(listen_fd);
  for (int fd : fds_) {
    if (fd >= 0) Tune(fd);
  }
}

TcpMesh::~TcpMesh() {
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

void TcpMesh::Abort(const std::string& reason) noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reason_.empty()) reason_ = reason;
  }
  aborted_.store(true, std::memory_order_release);
  for (int fd : fds_) {
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }
}

std::string TcpMesh::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

TcpCommunicator::TcpCommunicator(std::shared_ptr<TcpMesh> mesh, std::vector<int> mesh_ranks,
                                 int rank)
    : Communicator(
          [&] {
            std::vector<int> workers;
            for (int r : mesh_ranks) workers.push_back(mesh->worker_of(r));
            return workers;
          }(),
          rank),
      mesh_(std::move(mesh)),
      mesh_ranks_(std::move(mesh_ranks)) {}

void TcpCommunicator::Part(int64_t n, int p, int64_t* lo, int64_t* hi) const {
  int64_t per = (n + size() - 1) / size();
  *lo = std::min<int64_t>(n, per * p);
  *hi = std::min<int64_t>(n, *lo + per);
}

void TcpCommunicator::Run(std::vector<Transfer>* transfers, const char* what) {
  for (Transfer& t : *transfers) {
    if (t.send) {
      std::memcpy(t.header, &kMagic, 4);
      std::memcpy(t.header + 4, &t.tag, 4);
      std::memcpy(t.header + 8, &t.bytes, 8);
    }
  }
  auto closed = [&](const Transfer& t, const char* how) {
    std::string why = "the connection between " + Worker(worker_of(rank_)) + " and " +
                      Worker(worker_of(t.peer)) + " " + how + " during " + what;
    if (mesh_->aborted()) why += " (" + mesh_->reason() + ")";
    mesh_->Abort(why);
    NotePeerFailure();
    Fail(std::string(what) + " failed: " + why + "; " + Worker(worker_of(t.peer)) +
         " exited or failed");
  };
  std::vector<pollfd> fds;
  std::vector<Transfer*> pending;
  while (true) {
    fds.clear();
    pending.clear();
    for (Transfer& t : *transfers) {
      if (t.done == t.bytes + 16) continue;
      pending.push_back(&t);
      fds.push_back(
          pollfd{mesh_->fd(mesh_ranks_[t.peer]), static_cast<short>(t.send ? POLLOUT : POLLIN), 0});
    }
    if (pending.empty()) return;
    int rc = ::poll(fds.data(), fds.size(), kPollMs);
    if (rc < 0 && errno != EINTR)
      Fail(std::string(what) + ": poll failed: " + std::strerror(errno));
    if (mesh_->aborted()) {
      NotePeerFailure();
      Fail(std::string(what) + " was aborted: " + mesh_->reason());
    }
    for (size_t i = 0; i < pending.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Transfer& t = *pending[i];
      int fd = fds[i].fd;
      while (t.done < t.bytes + 16) {
        ssize_t n;
        if (t.send) {
          iovec iov[2];
          int cnt = 0;
          if (t.done < 16) iov[cnt++] = {t.header + t.done, static_cast<size_t>(16 - t.done)};
          int64_t data_done = std::max<int64_t>(0, t.done - 16);
          if (t.bytes > data_done) {
            iov[cnt++] = {t.data + data_done, static_cast<size_t>(t.bytes - data_done)};
          }
          msghdr msg{};
          msg.msg_iov = iov;
          msg.msg_iovlen = cnt;
          n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
        } else if (t.done < 16) {
          n = ::recv(fd, t.header + t.done, 16 - t.done, 0);
        } else {
          int64_t data_done = t.done - 16;
          n = ::recv(fd, t.data + data_done, static_cast<size_t>(t.bytes - data_done), 0);
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n == 0 && !t.send) closed(t, "closed");
        if (n < 0) closed(t, (std::string("broke (") + std::strerror(errno) + ")").c_str());
        int64_t before = t.done;
        t.done += n;
        if (!t.send && before < 16 && t.done >= 16) {
          uint32_t magic, tag;
          int64_t bytes;
          std::memcpy(&magic, t.header, 4);
          std::memcpy(&tag, t.header + 4, 4);
          std::memcpy(&bytes, t.header + 8, 8);
          if (magic != kMagic || tag != t.tag || bytes != t.bytes) {
            std::string why = Worker(worker_of(t.peer)) + " sent " + TagName(tag) + " data of " +
                              std::to_string(bytes) + " bytes while " + Worker(worker_of(rank_)) +
                              " expected " + TagName(t.tag) + " data of " +
                              std::to_string(t.bytes) +
                              " bytes (the workers ran different programs or buffer sizes)";
            mesh_->Abort(why);
            Fail(std::string(what) + " failed: " + why);
          }
        }
      }
    }
  }
}

void TcpCommunicator::AllReduce(const void* send, void* recv, int64_t count, DLDataType dtype,
                                ReduceKind kind) {
  int64_t elem = (dtype.bits * dtype.lanes + 7) / 8;
  if (IsHalfFloat(dtype)) {
    // Partial sums travel as float32: one rounding at the end, as on the shared-memory path.
    std::vector<float> acc(static_cast<size_t>(count));
    WidenToFloat(send, acc.data(), count, dtype);
    RingAllReduce(reinterpret_cast<char*>(acc.data()), count, DLDataType{kDLFloat, 32, 1}, kind);
    NarrowFromFloat(acc.data(), recv, count, dtype);
    return;
  }
  if (send != recv) std::memcpy(recv, send, count * elem);
  RingAllReduce(static_cast<char*>(recv), count, dtype, kind);
}

void TcpCommunicator::RingAllReduce(char* acc, int64_t count, DLDataType dtype, ReduceKind kind) {
  int64_t elem = (dtype.bits * dtype.lanes + 7) / 8;
  int n = size();
  if (n == 1 || count == 0) return;
  int next = (rank_ + 1) % n, prev = (rank_ + n - 1) % n;
  int64_t lo, hi;
  Part(count, 0, &lo, &hi);
  std::vector<char> tmp(static_cast<size_t>((hi - lo) * elem));
  // Reduce-scatter: after n-1 steps we hold the full reduction of part (rank + 1) % n.
  for (int step = 0; step < n - 1; ++step) {
    int send_part = (rank_ - step + n) % n, recv_part = (rank_ - step - 1 + n) % n;
    int64_t slo, shi, rlo, rhi;
    Part(count, send_part, &slo, &shi);
    Part(count, recv_part, &rlo, &rhi);
    std::vector<Transfer> ts = {{next, true, acc + slo * elem, (shi - slo) * elem, kAllReduce},
                                {prev, false, tmp.data(), (rhi - rlo) * elem, kAllReduce}};
    Run(&ts, "allreduce");
    ReduceInto(acc + rlo * elem, tmp.data(), rhi - rlo, dtype, kind);
  }
  int owned = (rank_ + 1) % n;
  if (kind == ReduceKind::kAvg) {
    Part(count, owned, &lo, &hi);
    FinishAverage(acc + lo * elem, hi - lo, dtype, n);
  }
  // Allgather of the reduced parts around the same ring.
  for (int step = 0; step < n - 1; ++step) {
    int send_part = (owned - step + n) % n, recv_part = (owned - step - 1 + n) % n;
    int64_t slo, shi, rlo, rhi;
    Part(count, send_part, &slo, &shi);
    Part(count, recv_part, &rlo, &rhi);
    std::vector<Transfer> ts = {{next, true, acc + slo * elem, (shi - slo) * elem, kAllReduce},
                                {prev, false, acc + rlo * elem, (rhi - rlo) * elem, kAllReduce}};
    Run(&ts, "allreduce");
  }
}

void TcpCommunicator::AllGather(const void* send, void* recv, int64_t bytes) {
  char* out = static_cast<char*>(recv);
  if (out + rank_ * bytes != send) std::memcpy(out + rank_ * bytes, send, bytes);
  int n = size();
  int next = (rank_ + 1) % n, prev = (rank_ + n - 1) % n;
  for (int step = 0; step < n - 1; ++step) {
    int send_block = (rank_ - step + n) % n, recv_block = (rank_ - step - 1 + n) % n;
    std::vector<Transfer> ts = {{next, true, out + send_block * bytes, bytes, kAllGather},
                                {prev, false, out + recv_block * bytes, bytes, kAllGather}};
    Run(&ts, "allgather");
  }
}

void TcpCommunicator::Broadcast(const void* send, void* recv, int64_t bytes) {
  char* out = static_cast<char*>(recv);
  int n = size();
  int mask = 1;
  // Binomial tree rooted at rank 0: receive from the parent (our lowest set bit cleared)...
  if (rank_ == 0) {
    if (send != recv) std::memcpy(out, send, bytes);
    while (mask < n) mask <<= 1;
  } else {
    mask = rank_ & -rank_;
    std::vector<Transfer> ts = {{rank_ - mask, false, out, bytes, kBroadcast}};
    Run(&ts, "broadcast_from_worker0");
  }
  // ...then forward to our children, all at once.
  std::vector<Transfer> ts;
  for (mask >>= 1; mask >= 1; mask >>= 1) {
    if (rank_ + mask < n) ts.push_back({rank_ + mask, true, out, bytes, kBroadcast});
  }
  Run(&ts, "broadcast_from_worker0");
}

void TcpCommunicator::Scatter(const void* send, void* recv, int64_t bytes) {
  std::vector<Transfer> ts;
  if (rank_ == 0) {
    const char* in = static_cast<const char*>(send);
    for (int p = 1; p < size(); ++p) {
      ts.push_back({p, true, const_cast<char*>(in) + p * bytes, bytes, kScatter});
    }
    if (recv != send) std::memcpy(recv, in, bytes);
  } else {
    ts.push_back({0, false, static_cast<char*>(recv), bytes, kScatter});
  }
  Run(&ts, "scatter_from_worker0");
}

void TcpCommunicator::Gather(const void* send, void* recv, int64_t bytes) {
  std::vector<Transfer> ts;
  if (rank_ == 0) {
    char* out = static_cast<char*>(recv);
    for (int p = 1; p < size(); ++p) ts.push_back({p, false, out + p * bytes, bytes, kGather});
    if (out != send) std::memcpy(out, send, bytes);
  } else {
    ts.push_back({0, true, const_cast<char*>(static_cast<const char*>(send)), bytes, kGather});
  }
  Run(&ts, "gather_to_worker0");
}

void TcpCommunicator::Send(const void* buf, int64_t bytes, int peer) {
  std::vector<Transfer> ts = {
      {peer, true, const_cast<char*>(static_cast<const char*>(buf)), bytes, kPointToPoint}};
  Run(&ts, "send");
}

void TcpCommunicator::Recv(void* buf, int64_t bytes, int peer) {
  std::vector<Transfer> ts = {{peer, false, static_cast<char*>(buf), bytes, kPointToPoint}};
  Run(&ts, "recv");
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime
