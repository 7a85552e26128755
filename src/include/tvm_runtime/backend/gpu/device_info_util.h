/*
 * The error every GPU backend raises for a device index that does not exist (or for any device
 * when its driver is unusable), worded the same way for all of them.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_DEVICE_INFO_UTIL_H_
#define TVM_RUNTIME_BACKEND_GPU_DEVICE_INFO_UTIL_H_

#include <tvm_runtime/backend/error.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tvm_runtime {
namespace backend {

/* RuntimeError "<api> is not available: <status>" when the machine has no usable device,
 * otherwise ValueError naming the index and how many devices there are. */
[[noreturn]] inline void ThrowMissingDevice(const char* api, int32_t device_id, size_t num_devices,
                                            const std::string& status) {
  if (num_devices == 0)
    ThrowError("RuntimeError", std::string(api) + " is not available: " + status);
  ThrowError("ValueError", std::string(api) + " device " + std::to_string(device_id) +
                               " does not exist; this machine has " + std::to_string(num_devices) +
                               " " + api + " device(s)");
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_DEVICE_INFO_UTIL_H_
