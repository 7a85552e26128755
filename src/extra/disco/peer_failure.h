/*
 * The error of a collective that failed because of another worker: a peer died, closed its end,
 * or aborted the communicator after failing itself.  Communicators throw it as a plain C++
 * exception (they know nothing of tvm-ffi, so the C++ test runs them without it); the functions
 * the workers call by name (cpu_ccl.cc) turn it into the tvm-ffi error kind kPeerFailureKind, which
 * the Python worker loop recognises to let the session name the worker that failed first.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_PEER_FAILURE_H_
#define TVM_RUNTIME_EXTRA_DISCO_PEER_FAILURE_H_

#include <stdexcept>
#include <string>

namespace tvm_runtime {
namespace extra {
namespace disco {

/* The tvm-ffi error kind of a PeerFailure once it crosses into Python (a RuntimeError there,
 * registered as tvm.backend.extra.disco._worker.DiscoPeerFailureError). */
constexpr const char* kPeerFailureKind = "DiscoPeerFailure";

class PeerFailure : public std::runtime_error {
 public:
  /* `worker`: the Disco worker that died or closed its end, -1 when the communicator was aborted
   * (the reason then names the worker that failed). */
  PeerFailure(int worker, const std::string& message)
      : std::runtime_error(message), worker_(worker) {}

  int worker() const { return worker_; }

 private:
  int worker_;
};

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_PEER_FAILURE_H_
