#include "serve_loop.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
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
// Reads go through a buffer of this size, so a small packet (length and body) takes one recv;
// larger reads go straight to their destination.
constexpr size_t kInboxBytes = size_t{1} << 16;

class Connection {
 public:
  Connection(int fd, double idle_timeout_s)
      : fd_(fd), idle_timeout_s_(idle_timeout_s), inbox_(kInboxBytes) {}

  /* Fills `out` with exactly n bytes.  `first` marks the start of a packet: end-of-stream or
   * idleness there is the client leaving between calls, not a broken packet. */
  ServeOutcome ReadExact(char* out, size_t n, bool first) {
    size_t got = TakeBuffered(out, n);
    while (got < n) {
      bool direct = n - got >= kInboxBytes;
      ssize_t k = 0;
      ServeOutcome received = Receive(direct ? out + got : inbox_.data(),
                                      direct ? n - got : kInboxBytes, first && got == 0, &k);
      if (received.status != ServeStatus::kContinue) return received;
      if (k == 0) {
        if (first && got == 0) return {ServeStatus::kClosed, ""};
        return {ServeStatus::kProtocolError, "connection closed in the middle of a packet (" +
                                                 std::to_string(got) + "/" + std::to_string(n) +
                                                 " bytes)"};
      }
      if (direct) {
        got += static_cast<size_t>(k);
      } else {
        begin_ = 0;
        end_ = static_cast<size_t>(k);
        got += TakeBuffered(out + got, n - got);
      }
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
  size_t TakeBuffered(char* out, size_t n) {
    size_t k = std::min(n, end_ - begin_);
    std::memcpy(out, inbox_.data() + begin_, k);
    begin_ += k;
    return k;
  }

  /* One recv of up to n bytes into `to` (0 at end-of-stream), within the idle timeout. */
  ServeOutcome Receive(char* to, size_t n, bool between_calls, ssize_t* received) {
    for (;;) {
      if (idle_timeout_s_ > 0) {
        ServeOutcome waited = WaitReadable(between_calls);
        if (waited.status != ServeStatus::kContinue) return waited;
      }
      *received = ::recv(fd_, to, n, 0);
      if (*received >= 0) return {ServeStatus::kContinue, ""};
      if (errno != EINTR) return {ServeStatus::kConnectionError, std::strerror(errno)};
    }
  }

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
  std::vector<char> inbox_;
  size_t begin_ = 0;
  size_t end_ = 0;  // inbox_[begin_, end_) is received and not yet read
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
