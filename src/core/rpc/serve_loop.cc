#include "serve_loop.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "remote_call.h"
#include "wire_format.h"

namespace tvm_runtime {
namespace core {
namespace rpc {
namespace {

// A receive buffer that grew past this for one large packet is released after it.
constexpr size_t kKeptBufferBytes = size_t{1} << 20;

class Connection {
 public:
  Connection(int fd, double idle_timeout_s) : fd_(fd), idle_timeout_s_(idle_timeout_s) {}

  /* Fills `out` with exactly n bytes.  `first` marks the start of a packet: end-of-stream or
   * idleness there is the client leaving between calls, not a broken packet. */
  ServeOutcome ReadExact(char* out, size_t n, bool first) {
    size_t got = 0;
    while (got < n) {
      if (idle_timeout_s_ > 0) {
        ServeOutcome waited = WaitReadable(first && got == 0);
        if (waited.status != ServeStatus::kContinue) return waited;
      }
      ssize_t k = ::recv(fd_, out + got, n - got, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) return {ServeStatus::kConnectionError, std::strerror(errno)};
      if (k == 0) {
        if (first && got == 0) return {ServeStatus::kClosed, ""};
        return {ServeStatus::kProtocolError, "connection closed in the middle of a packet (" +
                                                 std::to_string(got) + "/" + std::to_string(n) +
                                                 " bytes)"};
      }
      got += static_cast<size_t>(k);
    }
    return {ServeStatus::kContinue, ""};
  }

  ServeOutcome WriteAll(const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      // MSG_NOSIGNAL: a client gone mid-reply is an error here, not a SIGPIPE
      ssize_t k = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) return {ServeStatus::kConnectionError, std::strerror(errno)};
      sent += static_cast<size_t>(k);
    }
    return {ServeStatus::kContinue, ""};
  }

 private:
  ServeOutcome WaitReadable(bool between_calls) {
    pollfd p{fd_, POLLIN, 0};
    int timeout_ms = static_cast<int>(idle_timeout_s_ * 1000.0);
    for (;;) {
      int rc = ::poll(&p, 1, timeout_ms);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) return {ServeStatus::kConnectionError, std::strerror(errno)};
      if (rc == 0) {
        return {ServeStatus::kIdle,
                between_calls ? "sent nothing" : "stopped in the middle of a packet"};
      }
      return {ServeStatus::kContinue, ""};
    }
  }

  int fd_;
  double idle_timeout_s_;
};

}  // namespace

ServeOutcome ServeConnection(SessionStateObj* state, const ServeOptions& options,
                             const std::function<bool(const char*, size_t)>& fallback) {
  Connection conn(options.fd, options.idle_timeout_s);
  std::vector<char> packet;
  for (;;) {
    uint64_t nbytes = 0;
    ServeOutcome read = conn.ReadExact(reinterpret_cast<char*>(&nbytes), sizeof(nbytes), true);
    if (read.status != ServeStatus::kContinue) return read;
    if (nbytes == 0) continue;
    if (nbytes > options.max_packet_bytes) {
      return {ServeStatus::kProtocolError, "packet length " + std::to_string(nbytes) +
                                               " exceeds the server limit of " +
                                               std::to_string(options.max_packet_bytes) + " bytes"};
    }
    if (nbytes < sizeof(int32_t)) {
      return {ServeStatus::kProtocolError,
              "packet of " + std::to_string(nbytes) + " bytes has no room for its code"};
    }
    packet.resize(static_cast<size_t>(nbytes));
    read = conn.ReadExact(packet.data(), packet.size(), false);
    if (read.status != ServeStatus::kContinue) return read;
    int32_t code;
    std::memcpy(&code, packet.data(), sizeof(code));
    if (code == static_cast<int32_t>(Code::kShutdown)) return {ServeStatus::kClosed, ""};
    std::optional<std::string> reply;
    try {
      reply = AnswerPacket(state, packet.data(), packet.size(), options.max_packet_bytes);
    } catch (const WireError& err) {
      return {ServeStatus::kProtocolError, err.what()};
    }
    if (reply.has_value()) {
      ServeOutcome wrote = conn.WriteAll(*reply);
      if (wrote.status != ServeStatus::kContinue) return wrote;
    } else if (!fallback(packet.data(), packet.size())) {
      return {ServeStatus::kStopped, ""};
    }
    if (packet.capacity() > kKeptBufferBytes) std::vector<char>().swap(packet);
  }
}

}  // namespace rpc
}  // namespace core
}  // namespace tvm_runtime
