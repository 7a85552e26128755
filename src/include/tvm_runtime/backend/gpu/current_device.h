/*
 * The device a thread's kernel launches go to.  Compiled host code calls __tvm_set_device
 * (which reaches the backend's set_device) before it launches kernels, and the launch itself
 * carries no device, so each backend remembers the choice per thread, per device type.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_CURRENT_DEVICE_H_
#define TVM_RUNTIME_BACKEND_GPU_CURRENT_DEVICE_H_

#include <cstdint>

namespace tvm_runtime {
namespace backend {

/* This thread's current device index for `DeviceType` (default 0); assign to change it.
 * Symbols are hidden, so every backend DSO has its own copy even for a shared type. */
template <int32_t DeviceType>
int32_t& CurrentDevice() {
  thread_local int32_t device_id = 0;
  return device_id;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_CURRENT_DEVICE_H_
