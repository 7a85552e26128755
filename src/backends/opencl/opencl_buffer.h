/*
 * What `DLTensor::data` points to for OpenCL tensors.
 *
 * TVM host code never dereferences `data` for device 4: it forwards it to kernels, where the
 * argument must be a cl_mem, so the cl_mem is the first member and `data` itself is the
 * pointer clSetKernelArg wants.  The descriptor is 64-byte aligned because compiled host code
 * assumes TVM_RUNTIME_ALLOC_ALIGNMENT for every `data` pointer; the device memory behind the
 * cl_mem is aligned by the driver to CL_DEVICE_MEM_BASE_ADDR_ALIGN (>= 128 bytes on every
 * full-profile device), so kernels see at least the alignment TVM assumes too.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_BUFFER_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_BUFFER_H_

#include <cstddef>
#include <cstdint>

#include "cl_api.h"

namespace tvm_runtime {
namespace opencl {

struct alignas(64) BufferDescriptor {
  cl_mem buffer = nullptr;  // must stay first
  int32_t device_id = 0;
  uint64_t nbytes = 0;
};

static_assert(offsetof(BufferDescriptor, buffer) == 0, "kernels receive &descriptor->buffer");

inline BufferDescriptor* AsBuffer(void* data) { return static_cast<BufferDescriptor*>(data); }
inline const BufferDescriptor* AsBuffer(const void* data) {
  return static_cast<const BufferDescriptor*>(data);
}

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_BUFFER_H_
