#include "tcp_transport.h"

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
#include <vector>

#include "collective_errors.h"
#include "peer_failure.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

namespace {

constexpr uint32_t kMagic = 0x44564D54;  // "TMVD"
constexpr size_t kTokenBytes = 32;
constexpr int kPollMs = 100;
constexpr int64_t kHeaderBytes = 16;  // magic, operation, size

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

/* A transfer in progress: bytes moved so far, header included. */
struct Progress {
  Transfer* t;
  int fd;
  int64_t done;
  char header[kHeaderBytes];
};

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

void TcpTransport::Exchange(Transfer* transfers, int count, const char* what) {
  std::vector<Progress> moves;
  moves.reserve(count);
  for (int i = 0; i < count; ++i) {
    Transfer& t = transfers[i];
    Progress p{&t, mesh_->fd(mesh_ranks_[t.peer]), 0, {}};
    if (t.send) {
      uint32_t op = static_cast<uint32_t>(t.op);
      std::memcpy(p.header, &kMagic, 4);
      std::memcpy(p.header + 4, &op, 4);
      std::memcpy(p.header + 8, &t.bytes, 8);
    }
    moves.push_back(p);
  }
  auto closed = [&](const Transfer& t, const std::string& how) {
    std::string why = "the connection between " + Worker(worker_of(rank_)) + " and " +
                      Worker(worker_of(t.peer)) + " " + how + " during " + what;
    if (mesh_->aborted()) why += " (" + mesh_->reason() + ")";
    mesh_->Abort(why);
    throw PeerFailure(worker_of(t.peer), std::string(what) + " failed: " + why + "; " +
                                             Worker(worker_of(t.peer)) + " exited or failed");
  };
  auto check_header = [&](const Progress& p) {
    uint32_t magic, op;
    int64_t bytes;
    std::memcpy(&magic, p.header, 4);
    std::memcpy(&op, p.header + 4, 4);
    std::memcpy(&bytes, p.header + 8, 8);
    if (magic == kMagic && op == static_cast<uint32_t>(p.t->op) && bytes == p.t->bytes) return;
    std::string why = Worker(worker_of(p.t->peer)) + " sent " + OpName(static_cast<Op>(op)) +
                      " data of " + std::to_string(bytes) + " bytes while " +
                      Worker(worker_of(rank_)) + " expected " + OpName(p.t->op) + " data of " +
                      std::to_string(p.t->bytes) +
                      " bytes (the workers ran different programs or buffer sizes)";
    mesh_->Abort(why);
    Fail(std::string(what) + " failed: " + why);
  };
  std::vector<pollfd> fds;
  std::vector<Progress*> pending;
  while (true) {
    fds.clear();
    pending.clear();
    for (Progress& p : moves) {
      if (p.done == p.t->bytes + kHeaderBytes) continue;
      pending.push_back(&p);
      fds.push_back(pollfd{p.fd, static_cast<short>(p.t->send ? POLLOUT : POLLIN), 0});
    }
    if (pending.empty()) return;
    int rc = ::poll(fds.data(), fds.size(), kPollMs);
    if (rc < 0 && errno != EINTR)
      Fail(std::string(what) + ": poll failed: " + std::strerror(errno));
    if (mesh_->aborted()) {
      throw PeerFailure(-1, std::string(what) + " was aborted: " + mesh_->reason());
    }
    for (size_t i = 0; i < pending.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Progress& p = *pending[i];
      const Transfer& t = *p.t;
      while (p.done < t.bytes + kHeaderBytes) {
        ssize_t n;
        int64_t data_done = std::max<int64_t>(0, p.done - kHeaderBytes);
        if (t.send) {
          iovec iov[2];
          int cnt = 0;
          if (p.done < kHeaderBytes) {
            iov[cnt++] = {p.header + p.done, static_cast<size_t>(kHeaderBytes - p.done)};
          }
          if (t.bytes > data_done) {
            iov[cnt++] = {t.data + data_done, static_cast<size_t>(t.bytes - data_done)};
          }
          msghdr msg{};
          msg.msg_iov = iov;
          msg.msg_iovlen = cnt;
          n = ::sendmsg(p.fd, &msg, MSG_NOSIGNAL);
        } else if (p.done < kHeaderBytes) {
          n = ::recv(p.fd, p.header + p.done, kHeaderBytes - p.done, 0);
        } else {
          n = ::recv(p.fd, t.data + data_done, static_cast<size_t>(t.bytes - data_done), 0);
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n == 0 && !t.send) closed(t, "closed");
        if (n < 0) closed(t, std::string("broke (") + std::strerror(errno) + ")");
        int64_t before = p.done;
        p.done += n;
        if (!t.send && before < kHeaderBytes && p.done >= kHeaderBytes) check_header(p);
      }
    }
  }
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime
