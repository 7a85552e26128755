/*
 * The packets the native RPC session answers itself (the hot path of every client): CALL_FUNC
 * (decode the arguments, call the tvm-ffi function, encode its result), COPY_TO_REMOTE,
 * COPY_FROM_REMOTE and FREE_HANDLE.  Everything else (the handshake's INIT_SERVER, the other
 * syscalls: GetGlobalFunc with the session's allow-list, device allocation, streams) is left to
 * the Python session (tvm/rpc/_session.py), so the session's policy is decided in one place.
 */
#ifndef TVM_RUNTIME_CORE_RPC_REMOTE_CALL_H_
#define TVM_RUNTIME_CORE_RPC_REMOTE_CALL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "session_state.h"

namespace tvm_runtime {
namespace core {
namespace rpc {

/* The error kind of a failure the session's Python side already described in full ("KindError:
 * message"): tvm/rpc/_session.py registers its exception class under this name. */
constexpr const char kDescribedErrorKind[] = "RPCDescribedError";

/* The reply packet (length prefix included) to the packet body `body`, or nullopt when its code
 * is one the native session leaves to Python.  A failing call is an EXCEPTION reply; a body that
 * does not follow the protocol throws WireError (the session must end).  `max_copy_bytes` bounds
 * what one COPY_FROM_REMOTE may ask for. */
std::optional<std::string> AnswerPacket(SessionStateObj* state, const char* body, size_t size,
                                        uint64_t max_copy_bytes);

/* An EXCEPTION packet carrying `message`, as the client raises it. */
std::string ExceptionPacket(const std::string& message);

}  // namespace rpc
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_RPC_REMOTE_CALL_H_
