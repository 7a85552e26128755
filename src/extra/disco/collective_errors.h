/*
 * The words and the error a communicator uses for its own failures: a worker named the same way
 * in every message, and a RuntimeError (a peer's failure is a PeerFailure, peer_failure.h).
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_COLLECTIVE_ERRORS_H_
#define TVM_RUNTIME_EXTRA_DISCO_COLLECTIVE_ERRORS_H_

#include <tvm_runtime/backend/error.h>

#include <string>

namespace tvm_runtime {
namespace extra {
namespace disco {

inline std::string Worker(int id) { return "Disco worker " + std::to_string(id); }

[[noreturn]] inline void Fail(const std::string& message) {
  backend::ThrowError("RuntimeError", message);
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_COLLECTIVE_ERRORS_H_
