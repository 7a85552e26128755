/*
 * The devices of a vendor API, discovered once on first use.
 *
 * Discovery opens the vendor driver, so it must not run at import or registration; and a
 * machine without a driver or device is normal, so its outcome is remembered as text (for
 * Device.exist == False and the diagnostics) instead of thrown from availability queries.
 * Only asking for a specific device that is not there throws, with that text.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_LAZY_DEVICES_H_
#define TVM_RUNTIME_BACKEND_GPU_LAZY_DEVICES_H_

#include <tvm_runtime/backend/gpu/device_info_util.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace backend {

template <typename Device>
class LazyDevices {
 public:
  using List = std::vector<std::unique_ptr<Device>>;

  /* `api` names the vendor API in messages, e.g. "CUDA". */
  explicit LazyDevices(std::string api) : api_(std::move(api)) {}

  /* Runs `discover(List*) -> std::string status` once ("" when usable); an exception becomes the
   * status.  Afterwards this is one acquire load. */
  template <typename Discover>
  void EnsureDiscovered(Discover&& discover) {
    if (ready_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (ready_.load(std::memory_order_relaxed)) return;
    try {
      status_ = discover(&devices_);
    } catch (const std::exception& e) {
      devices_.clear();
      status_ = api_ + " initialization failed: " + e.what();
    }
    ready_.store(true, std::memory_order_release);
  }

  /* Valid after EnsureDiscovered. */
  size_t size() const { return devices_.size(); }
  const std::string& status() const { return status_; }

  /* The device, or RuntimeError (no device at all: says why) / ValueError (bad index). */
  Device& Get(int32_t device_id) const {
    if (static_cast<uint32_t>(device_id) >= devices_.size()) {
      ThrowMissingDevice(api_.c_str(), device_id, devices_.size(), status_);
    }
    return *devices_[device_id];
  }

 private:
  std::string api_;
  std::mutex mu_;
  std::atomic<bool> ready_{false};
  List devices_;  // written once under mu_, read-only after ready_
  std::string status_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_LAZY_DEVICES_H_
