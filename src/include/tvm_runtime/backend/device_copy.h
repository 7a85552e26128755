/*
 * The checks every GPU backend's copy_data performs before touching a driver: which direction a
 * flat copy goes (host memory is CPU, CUDA-host or ROCm-host), and whether an [offset, offset +
 * nbytes) range lies inside the buffer a handle describes.  Both raise ValueError with a message
 * that names the backend, never an out-of-bounds device access.  Also the JSON list form of
 * Device.max_thread_dimensions that device tables report.
 */
#ifndef TVM_RUNTIME_BACKEND_DEVICE_COPY_H_
#define TVM_RUNTIME_BACKEND_DEVICE_COPY_H_

#include <dlpack/dlpack.h>
#include <tvm_runtime/backend/error.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace tvm_runtime {
namespace backend {

enum class CopyDirection { kDeviceToDevice, kDeviceToHost, kHostToDevice };

inline bool IsHostDevice(DLDevice dev) {
  return dev.device_type == kDLCPU || dev.device_type == kDLCUDAHost ||
         dev.device_type == kDLROCMHost;
}

/* Direction of a copy served by the backend of `device_type`; throws for other pairs. */
inline CopyDirection ClassifyCopy(DLDevice from, DLDevice to, int32_t device_type,
                                  const char* backend) {
  const bool from_dev = from.device_type == device_type;
  const bool to_dev = to.device_type == device_type;
  if (from_dev && to_dev) return CopyDirection::kDeviceToDevice;
  if (from_dev && IsHostDevice(to)) return CopyDirection::kDeviceToHost;
  if (to_dev && IsHostDevice(from)) return CopyDirection::kHostToDevice;
  ThrowError("ValueError", std::string(backend) + " cannot copy between device types " +
                               std::to_string(from.device_type) + " and " +
                               std::to_string(to.device_type));
}

/* Copies between two kinds of host memory (CPU, pinned CUDA/ROCm host memory) need no driver:
 * memcpy and true.  False for any pair that involves device memory. */
inline bool CopyBetweenHosts(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                             uint64_t nbytes, DLDevice dev_from, DLDevice dev_to) {
  if (!IsHostDevice(dev_from) || !IsHostDevice(dev_to)) return false;
  std::memcpy(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset,
              nbytes);
  return true;
}

/* Throws unless [offset, offset + nbytes) fits in a buffer of `size` bytes. */
inline void CheckCopyRange(const void* handle, uint64_t size, uint64_t offset, uint64_t nbytes,
                           const char* side, const char* backend) {
  if (handle == nullptr) {
    ThrowError("ValueError", std::string(backend) + " copy: " + side + " buffer is NULL");
  }
  if (offset > size || nbytes > size - offset) {
    ThrowError("ValueError", std::string(backend) + " copy: " + side + " range [" +
                                 std::to_string(offset) + ", " + std::to_string(offset + nbytes) +
                                 ") is outside the " + std::to_string(size) + "-byte buffer");
  }
}

/* "[a, b, c]": the JSON list form of Device.max_thread_dimensions. */
template <typename Int>
std::string JsonIntList(const Int* values, size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_DEVICE_COPY_H_
