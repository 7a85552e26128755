/*
 * Index arrays of the language-model state: int32 arrays built on the host and uploaded once per
 * forward into a device buffer that grows on demand, handed to kernels as a leading view (offset
 * zero: compiled kernels want byte_offset == 0 on every device).  Everything goes through the
 * core's tensor API (tensor_ops.h), so every device a backend registers works like the CPU.
 */
#ifndef TVM_RUNTIME_CORE_LM_DEVICE_TENSORS_H_
#define TVM_RUNTIME_CORE_LM_DEVICE_TENSORS_H_

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../tensor_ops.h"

namespace tvm_runtime {
namespace core {
namespace lm {

namespace ffi = ::tvm::ffi;

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
      buffer_ = AllocTensor(ffi::Shape({capacity_}), DLDataType{kDLInt, 32, 1}, device);
    }
    ffi::Tensor view = LeadingView(buffer_, shape);
    if (n > 0) {
      CopyFromHost(view.GetDLTensorPtr(), host.data(), n * static_cast<int64_t>(sizeof(int32_t)));
    }
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
