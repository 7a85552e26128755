/*
 * Argument checks shared by the contrib functions.  Compiled code always passes well-formed
 * tensors, but the same functions are reachable from Python, so every malformed argument becomes
 * a ValueError/TypeError that names the function and says what was expected instead of a crash.
 */
#ifndef TVM_RUNTIME_EXTRA_TENSOR_CHECKS_H_
#define TVM_RUNTIME_EXTRA_TENSOR_CHECKS_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>

#include <cstdint>
#include <string>

#include "error_text.h"

namespace tvm_runtime {
namespace extra {

inline std::string DTypeName(DLDataType t) {
  return std::string(::tvm::ffi::DLDataTypeToString(t));
}

inline void RequireArgCount(const ::tvm::ffi::PackedArgs& args, int expected, const char* func,
                            const char* usage) {
  if (args.size() != expected) {
    backend::ThrowError("TypeError", ErrorText(func, " takes ", expected, " arguments ", usage,
                                               ", got ", args.size()));
  }
}

/* The tensor argument `index` of `func`, checked to be a compact tensor in host memory. */
inline DLTensor* CpuTensorArg(const ::tvm::ffi::PackedArgs& args, int index, const char* func,
                              const char* what) {
  auto tensor = args[index].try_cast<DLTensor*>();
  if (!tensor.has_value() || *tensor == nullptr) {
    backend::ThrowError(
        "TypeError", ErrorText(func, ": argument ", index, " (", what, ") must be a tensor, got ",
                               args[index].GetTypeKey()));
  }
  DLTensor* t = *tensor;
  int dev = t->device.device_type;
  if (!backend::IsHostDevice(t->device)) {
    backend::ThrowError(
        "ValueError",
        ErrorText(func, ": ", what,
                  " must be in CPU memory (these contrib functions run on the host); ",
                  "got device type ", dev, ". Copy it to tvm.cpu() first"));
  }
  if (t->ndim > 0 && t->data == nullptr) {
    backend::ThrowError("ValueError", ErrorText(func, ": ", what, " has no data"));
  }
  if (!::tvm::ffi::IsContiguous(*t)) {
    backend::ThrowError("ValueError",
                        ErrorText(func, ": ", what, " must be contiguous (compact row-major)"));
  }
  if (t->dtype.lanes != 1) {
    backend::ThrowError("ValueError",
                        ErrorText(func, ": ", what, " has vector dtype ", DTypeName(t->dtype),
                                  "; only scalar element types are supported"));
  }
  return t;
}

inline int64_t NumElements(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* Base pointer of a checked tensor, byte_offset applied. */
inline char* DataOf(const DLTensor* t) { return static_cast<char*>(t->data) + t->byte_offset; }

inline int NormalizeAxis(int64_t axis, const DLTensor* t, const char* func) {
  int64_t ndim = t->ndim;
  if (axis < -ndim || axis >= ndim || ndim == 0) {
    backend::ThrowError("ValueError", ErrorText(func, ": axis ", axis,
                                                " is out of range for a tensor of rank ", ndim));
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

/*
 * A tensor seen as [outer, length, inner] around `axis`: the rows to sort are the outer*inner
 * strided sequences of `length` elements, element k of row (o, i) at o*length*inner + k*inner + i.
 */
struct AxisSplit {
  int64_t outer = 1;
  int64_t length = 1;
  int64_t inner = 1;

  int64_t rows() const { return outer * inner; }
  /* Flat offset of element 0 of `row`, for a tensor whose extent along the axis is `extent`. */
  int64_t RowStart(int64_t row, int64_t extent) const {
    return (row / inner) * extent * inner + row % inner;
  }
};

inline AxisSplit SplitAtAxis(const DLTensor* t, int axis) {
  AxisSplit s;
  for (int i = 0; i < t->ndim; ++i) {
    if (i < axis) s.outer *= t->shape[i];
    if (i > axis) s.inner *= t->shape[i];
  }
  s.length = t->shape[axis];
  return s;
}

/* `out` must have `in`'s shape, except `extent` along `axis`. */
inline void RequireShapeAlongAxis(const DLTensor* in, const DLTensor* out, int axis, int64_t extent,
                                  const char* func, const char* what) {
  bool ok = in->ndim == out->ndim;
  for (int i = 0; ok && i < in->ndim; ++i) {
    ok = out->shape[i] == (i == axis ? extent : in->shape[i]);
  }
  if (!ok) {
    std::string want = "(";
    for (int i = 0; i < in->ndim; ++i) {
      want += (i ? ", " : "") + std::to_string(i == axis ? extent : in->shape[i]);
    }
    std::string got = "(";
    for (int i = 0; i < out->ndim; ++i) got += (i ? ", " : "") + std::to_string(out->shape[i]);
    backend::ThrowError(
        "ValueError", ErrorText(func, ": ", what, " has shape ", got, ") but must be ", want, ")"));
  }
}

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_TENSOR_CHECKS_H_
