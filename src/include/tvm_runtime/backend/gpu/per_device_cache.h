/*
 * Lazily created per-device state for GPU device modules (a built program plus kernel handle per
 * device, a loaded CUmodule, a Vulkan pipeline, ...).
 *
 * Kernels are launched far more often than they are built, so a lookup after the first is one
 * acquire load with no lock; creation runs under a mutex, at most once per device.  A creation
 * that throws (a kernel that fails to build) leaves the slot empty, so the next call reports the
 * error again instead of crashing on a half-made object.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_PER_DEVICE_CACHE_H_
#define TVM_RUNTIME_BACKEND_GPU_PER_DEVICE_CACHE_H_

#include <tvm_runtime/backend/error.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace tvm_runtime {
namespace backend {

template <typename T, int kMaxDevices = 64>
class PerDeviceCache {
 public:
  PerDeviceCache() {
    for (auto& slot : slots_) slot.store(nullptr, std::memory_order_relaxed);
  }
  PerDeviceCache(const PerDeviceCache&) = delete;
  PerDeviceCache& operator=(const PerDeviceCache&) = delete;
  ~PerDeviceCache() {
    for (auto& slot : slots_) delete slot.load(std::memory_order_relaxed);
  }

  /* The state for `device_id`, created with `create()` (returning std::unique_ptr<T>) on first
   * use.  `create` may throw; nothing is cached then. */
  template <typename Create>
  T* Get(int device_id, Create&& create) {
    if (static_cast<unsigned>(device_id) >= static_cast<unsigned>(kMaxDevices)) {
      ThrowError("ValueError", "device id " + std::to_string(device_id) +
                                   " is out of range (at most " + std::to_string(kMaxDevices) +
                                   " devices per backend)");
    }
    T* state = slots_[device_id].load(std::memory_order_acquire);
    if (state != nullptr) return state;
    std::lock_guard<std::mutex> lock(mu_);
    state = slots_[device_id].load(std::memory_order_relaxed);
    if (state == nullptr) {
      std::unique_ptr<T> made = create();
      state = made.release();
      slots_[device_id].store(state, std::memory_order_release);
    }
    return state;
  }

  /* The state for `device_id` if it was created, else nullptr. */
  T* Peek(int device_id) const {
    if (static_cast<unsigned>(device_id) >= static_cast<unsigned>(kMaxDevices)) return nullptr;
    return slots_[device_id].load(std::memory_order_acquire);
  }

 private:
  std::array<std::atomic<T*>, kMaxDevices> slots_;
  std::mutex mu_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_PER_DEVICE_CACHE_H_
