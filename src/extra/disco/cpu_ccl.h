/*
 * The "cpu" collective library of a Disco worker: its communicators (the whole session, and its
 * group when the session has several) and the listening socket a multi-machine session prepares
 * before the workers know each other's addresses.  The worker's context owns it.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_CPU_CCL_H_
#define TVM_RUNTIME_EXTRA_DISCO_CPU_CCL_H_

#include <memory>
#include <string>

#include "communicator.h"
#include "tcp_transport.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

class CpuCcl {
 public:
  ~CpuCcl();

  std::unique_ptr<Communicator> world;
  std::unique_ptr<Communicator> group;  // null when the session has one group: world serves
  std::shared_ptr<TcpMesh> mesh;
  int listen_fd = -1;

  Communicator& Get(bool in_group) { return in_group && group ? *group : *world; }
  void Abort(const std::string& reason) noexcept;
};

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_CPU_CCL_H_
