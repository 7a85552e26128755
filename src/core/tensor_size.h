/*
 * The byte size of a compact tensor, computed without wrapping around: tvm-ffi's GetDataSize
 * multiplies in 64 bits unchecked, and a wrapped size would back a huge shape with a tiny buffer
 * (out-of-bounds on first use; fuzzing found such shapes in corrupted params and executables).
 * Pure and header-only, so the C++ unit tests check it without a device.
 */
#ifndef TVM_RUNTIME_CORE_TENSOR_SIZE_H_
#define TVM_RUNTIME_CORE_TENSOR_SIZE_H_

#include <dlpack/dlpack.h>

#include <cstdint>

namespace tvm_runtime {
namespace core {

enum class TensorSize { kOk, kNegativeDimension, kTooLarge };

/* The bytes of a compact tensor of `shape` and `dtype` into `*nbytes` (0 for an empty one), or
 * why there is no such size.  Zeros are left out of the element count but not of the check: the
 * strides of an empty tensor are still products of its other dimensions, which must fit in int64.
 */
inline TensorSize CompactByteSize(const int64_t* shape, int ndim, DLDataType dtype,
                                  uint64_t* nbytes) {
  uint64_t elements = 1;
  bool overflow = false;
  bool empty = false;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return TensorSize::kNegativeDimension;
    if (shape[i] == 0) {
      empty = true;
      continue;
    }
    overflow |= __builtin_mul_overflow(elements, static_cast<uint64_t>(shape[i]), &elements);
  }
  uint64_t bits = 0;
  overflow |= __builtin_mul_overflow(elements, uint64_t{dtype.bits} * dtype.lanes, &bits);
  if (overflow || elements > static_cast<uint64_t>(INT64_MAX) || bits > UINT64_MAX - 7) {
    return TensorSize::kTooLarge;
  }
  *nbytes = empty ? 0 : (bits + 7) / 8;
  return TensorSize::kOk;
}

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_TENSOR_SIZE_H_
