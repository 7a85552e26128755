/*
 * The core's one tensor API: allocation on any registered device, byte copies between host
 * memory and a tensor, copies between tensors, and views.  Every byte moves through the device's
 * backend table (c_api.h), so the CPU takes the same path as OpenCL or CUDA.  The Relax VM, the
 * language-model state, the params format and the tensor cache call these directly; the
 * `runtime.TVMTensor*` globals (tensor_globals.cc) only register them under apache-tvm's names.
 */
#ifndef TVM_RUNTIME_CORE_TENSOR_OPS_H_
#define TVM_RUNTIME_CORE_TENSOR_OPS_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm_runtime/backend/device_copy.h>

#include <cstdint>
#include <string>

#include "tensor_size.h"

namespace tvm_runtime {
namespace core {

/* Host memory that every backend's copy_data accepts as the other side: CPU, pinned CUDA/ROCm. */
using backend::IsHostDevice;

/* "opencl:0", for messages. */
std::string DescribeDevice(DLDevice device);

/* CompactByteSize, or a ValueError that names the shape. */
uint64_t CheckedByteSize(const int64_t* shape, int ndim, DLDataType dtype);

/* A new compact tensor whose memory comes from the device's backend table (64-byte aligned). */
::tvm::ffi::Tensor AllocTensor(::tvm::ffi::ShapeView shape, DLDataType dtype, DLDevice device);

/* Host bytes into / out of a contiguous tensor of exactly `nbytes`; synchronous (waits for the
 * device), like apache-tvm's TVMTensorCopyFromBytes / TVMTensorCopyToBytes. */
void CopyFromHost(const DLTensor* dst, const void* host, int64_t nbytes);
void CopyToHost(const DLTensor* src, void* host, int64_t nbytes);

/* Whether a tensor copy returns before the device has finished it. */
enum class CopyWait {
  // Queued on the device's default stream, like apache-tvm's TVMTensorCopyFromTo: what the
  // `runtime.TVMTensorCopyFromTo` global and the language-model state (whose next reader is a
  // kernel on that same stream) want.
  kQueued,
  // Waits for the stream: for callers whose source may be freed or reused right after (the VM's
  // staging buffers and borrowed DLTensor* arguments, the tensor cache's upload buffer).
  kFinished,
};

/* THE copy rule: both tensors contiguous and of one byte size; the same device type on both
 * sides, or host memory on at least one side; the non-host side's backend copies (both sides
 * host: the CPU table). */
void CopyTensor(const DLTensor* from, const DLTensor* to, CopyWait wait);

/* A tensor of `shape`/`dtype` sharing the memory of the contiguous `source`, as apache-tvm 0.27
 * makes one: `data` stays the source's, `byte_offset` is the source's plus
 * `relative_byte_offset`.  Keeps the source alive; ValueError when the view does not fit. */
::tvm::ffi::Tensor CreateView(const ::tvm::ffi::Tensor& source, ::tvm::ffi::ShapeView shape,
                              DLDataType dtype, uint64_t relative_byte_offset);

/* Whether two tensors are the same bytes: same device, same first and last byte (apache-tvm
 * 0.27's runtime.TVMTensorIsStorageShared). */
bool IsStorageShared(const DLTensor* a, const DLTensor* b);

/* The first prod(shape) elements of `base` seen with `shape`: what the KV cache hands to
 * compiled kernels, which want byte_offset == 0, so `base` must have none. */
::tvm::ffi::Tensor LeadingView(const ::tvm::ffi::Tensor& base, ::tvm::ffi::ShapeView shape);

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_TENSOR_OPS_H_
