/*
 * The kernel objects of a device module, made on first lookup (so a kernel this runtime cannot
 * serve, e.g. an unsupported signature, fails only when it is used) and shared by every later
 * lookup of the same name, with their per-device state.  Lookups are rare next to launches (a
 * PackedFunc is looked up once and called many times), so one mutex is enough.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_LAZY_KERNELS_H_
#define TVM_RUNTIME_BACKEND_GPU_LAZY_KERNELS_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tvm_runtime {
namespace backend {

template <typename Kernel>
class LazyKernels {
 public:
  /* The kernel called `name`, made by `make()` (returning std::unique_ptr<Kernel>) on the first
   * lookup; `make` may throw, and nothing is kept then. */
  template <typename Make>
  Kernel* Get(const std::string& name, Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(name);
    if (it == kernels_.end()) it = kernels_.emplace(name, make()).first;
    return it->second.get();
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_LAZY_KERNELS_H_
