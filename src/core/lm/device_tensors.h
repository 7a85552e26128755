/*
 * Device tensors for the KV cache, made through the core's own tensor globals so that every
 * device a backend registers works the same way as the CPU: allocation, compact views at offset
 * zero (compiled kernels want byte_offset == 0 on every device), and int32 index arrays built on
 * the host and uploaded once per forward.
 */
#ifndef TVM_RUNTIME_CORE_LM_DEVICE_TENSORS_H_
#define TVM_RUNTIME_CORE_LM_DEVICE_TENSORS_H_

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tvm_runtime {
namespace core {
namespace lm {

namespace ffi = ::tvm::ffi;

// The core's tensor globals, looked up once and deliberately never destroyed (a static
// ffi::Function would be released after tvm-ffi itself at process exit).
inline const ffi::Function& TensorAllocGlobal() {
  static const ffi::Function* f =
      new ffi::Function(ffi::Function::GetGlobalRequired("runtime.TVMTensorAllocWithScope"));
  return *f;
}
inline const ffi::Function& TensorViewGlobal() {
  static const ffi::Function* f =
      new ffi::Function(ffi::Function::GetGlobalRequired("runtime.TVMTensorCreateView"));
  return *f;
}
inline const ffi::Function& TensorCopyFromBytesGlobal() {
  static const ffi::Function* f =
      new ffi::Function(ffi::Function::GetGlobalRequired("runtime.TVMTensorCopyFromBytes"));
  return *f;
}

inline const ffi::Function& TensorCopyFromToGlobal() {
  static const ffi::Function* f =
      new ffi::Function(ffi::Function::GetGlobalRequired("runtime.TVMTensorCopyFromTo"));
  return *f;
}

inline ffi::Tensor EmptyTensor(ffi::Shape shape, DLDataType dtype, DLDevice device) {
  return TensorAllocGlobal()(shape, dtype, device, nullptr).cast<ffi::Tensor>();
}

/* The first prod(shape) elements of `base` (compact, offset 0) seen with `shape`. */
inline ffi::Tensor LeadingView(const ffi::Tensor& base, ffi::Shape shape) {
  return TensorViewGlobal()(base, shape, base.dtype(), 0).cast<ffi::Tensor>();
}

inline void CopyFromHost(const ffi::Tensor& dst, const void* src, int64_t nbytes) {
  TensorCopyFromBytesGlobal()(dst, const_cast<void*>(src), nbytes);
}

/* Device-to-device (or host) copy between two compact DLTensor views of equal byte size. */
inline void CopyTensorView(DLTensor* from, DLTensor* to) { TensorCopyFromToGlobal()(from, to); }

/* An int32 array filled on the host and uploaded to a device buffer that grows on demand. */
class DeviceIntArray {
 public:
  std::vector<int32_t> host;

  /* Uploads `host` and returns a device view of it with `shape` (default: 1-D). */
  ffi::Tensor Upload(DLDevice device) {
    return Upload(device, ffi::Shape({static_cast<int64_t>(host.size())}));
  }
  ffi::Tensor Upload(DLDevice device, ffi::Shape shape) {
    int64_t n = static_cast<int64_t>(host.size());
    if (!buffer_.defined() || capacity_ < n) {
      capacity_ = std::max<int64_t>(n, 2 * capacity_) + 8;
      buffer_ = EmptyTensor(ffi::Shape({capacity_}), DLDataType{kDLInt, 32, 1}, device);
    }
    ffi::Tensor view = LeadingView(buffer_, shape);
    if (n > 0) CopyFromHost(view, host.data(), n * static_cast<int64_t>(sizeof(int32_t)));
    return view;
  }

 private:
  ffi::Tensor buffer_;
  int64_t capacity_ = 0;
};

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_DEVICE_TENSORS_H_
