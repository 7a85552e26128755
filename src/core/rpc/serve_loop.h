/*
 * The native RPC session's loop over one connected socket: read a packet (bounded by the
 * server's packet limit, within its idle timeout), answer it natively (remote_call.h) or hand it
 * to the Python session, write the reply; until the client shuts down, leaves, or breaks the
 * protocol.  Python owns everything around it: the handshake, TLS (a TLS session keeps the
 * Python loop), the session's process and its hang-up watcher.
 */
#ifndef TVM_RUNTIME_CORE_RPC_SERVE_LOOP_H_
#define TVM_RUNTIME_CORE_RPC_SERVE_LOOP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "session_state.h"

namespace tvm_runtime {
namespace core {
namespace rpc {

/* How a session ended (the values travel to tvm/rpc/_session.py, keep them in step). */
enum class ServeStatus : int {
  kContinue = -1,  // internal: not ended
  kClosed = 0,     // the client shut the session down or closed the connection
  kStopped = 1,    // the Python side of the session ended it
  kIdle = 2,       // the client sent nothing within the idle timeout
  kProtocolError = 3,
  kConnectionError = 4,
};

struct ServeOutcome {
  ServeStatus status;
  std::string message;
};

struct ServeOptions {
  int fd = -1;
  uint64_t max_packet_bytes = 0;
  double idle_timeout_s = 0;  // <= 0: wait for the client forever
};

/* Serves until the session ends.  `fallback(body, size)` handles a packet the native session
 * does not answer itself and returns false to end the session. */
ServeOutcome ServeConnection(SessionStateObj* state, const ServeOptions& options,
                             const std::function<bool(const char*, size_t)>& fallback);

}  // namespace rpc
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_RPC_SERVE_LOOP_H_
