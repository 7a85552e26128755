/*
 * Argument checks shared by the language-model helper builtins (sampling, logit processing):
 * they work on host memory, take float32 logits/probabilities and int32 token ids, and report a
 * wrong argument as a Python exception naming the builtin and what it expected.
 */
#ifndef TVM_RUNTIME_CORE_LM_HOST_TENSOR_ARGS_H_
#define TVM_RUNTIME_CORE_LM_HOST_TENSOR_ARGS_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm_runtime/backend/error.h>

#include <cstdint>
#include <string>
#include <utility>

#include "../tensor_ops.h"

namespace tvm_runtime {
namespace core {
namespace lm {
namespace lm_args {

inline std::string DeviceText(DLDevice dev) {
  return std::to_string(static_cast<int>(dev.device_type)) + ":" + std::to_string(dev.device_id);
}

/* `t` must be compact and of `dtype` ("float32", "int32", ...). */
inline void RequireCompact(const ::tvm::ffi::Tensor& t, DLDataType dtype, const char* who,
                           const char* what) {
  if (t.dtype() != dtype) {
    backend::ThrowError("TypeError", std::string(who) + ": " + what + " must be " +
                                         ::tvm::ffi::DLDataTypeToString(dtype).c_str() + ", got " +
                                         ::tvm::ffi::DLDataTypeToString(t.dtype()).c_str());
  }
  if (!t.IsContiguous()) {
    backend::ThrowError("ValueError", std::string(who) + ": " + what + " must be contiguous");
  }
}

/* In-place builtins edit host memory, as apache-tvm 0.27's do: a device tensor is an error. */
inline void RequireHost(const ::tvm::ffi::Tensor& t, const char* who, const char* what) {
  DLDevice dev = t.device();
  if (dev.device_type != kDLCPU) {
    backend::ThrowError("ValueError",
                        std::string(who) + ": " + what + " must be a CPU tensor (it is on device " +
                            DeviceText(dev) + "); copy it to tvm.cpu() first, e.g. with .copyto()");
  }
}

/* `t` itself when it is on the CPU, else a CPU copy (read-only inputs may live anywhere). */
inline ::tvm::ffi::Tensor OnHost(const ::tvm::ffi::Tensor& t) {
  DLDevice cpu{kDLCPU, 0};
  if (t.device().device_type == kDLCPU && t.device().device_id == 0) return t;
  ::tvm::ffi::Tensor copy = AllocTensor(t.shape(), t.dtype(), cpu);
  CopyTensor(t.GetDLTensorPtr(), copy.GetDLTensorPtr(), CopyWait::kFinished);
  return copy;
}

template <typename T>
T* HostData(const ::tvm::ffi::Tensor& t) {
  const DLTensor* dl = t.GetDLTensorPtr();
  return reinterpret_cast<T*>(static_cast<char*>(dl->data) + dl->byte_offset);
}

inline int64_t LastDim(const ::tvm::ffi::Tensor& t) {
  return t.ndim() == 0 ? 1 : t.shape()[t.ndim() - 1];
}

/* Every dimension but the last must be 1 (a single row of logits or probabilities). */
inline void RequireSingleRow(const ::tvm::ffi::Tensor& t, const char* who, const char* what) {
  for (int i = 0; i + 1 < t.ndim(); ++i) {
    if (t.shape()[i] != 1) {
      backend::ThrowError("ValueError", std::string(who) + ": the leading dimensions of " + what +
                                            " must be 1 (one row), got dimension " +
                                            std::to_string(i) + " = " +
                                            std::to_string(t.shape()[i]));
    }
  }
  if (LastDim(t) < 1) {
    backend::ThrowError("ValueError", std::string(who) + ": " + what + " is empty");
  }
}

constexpr DLDataType kFloat32{kDLFloat, 32, 1};
constexpr DLDataType kInt32{kDLInt, 32, 1};
constexpr DLDataType kInt64{kDLInt, 64, 1};

/* The one float32 row of a read-only input (logits or probabilities), on the host. */
struct FloatRow {
  ::tvm::ffi::Tensor host;  // keeps a device input's host copy alive
  const float* values;
  int64_t size;
};

/* Checks `t` (compact float32, a single row; it may live on any device) and reads it. */
inline FloatRow ReadFloatRow(const ::tvm::ffi::Tensor& t, const char* who, const char* what) {
  RequireCompact(t, kFloat32, who, what);
  RequireSingleRow(t, who, what);
  ::tvm::ffi::Tensor host = OnHost(t);
  const float* values = HostData<const float>(host);
  int64_t size = LastDim(host);
  return FloatRow{std::move(host), values, size};
}

}  // namespace lm_args
}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_HOST_TENSOR_ARGS_H_
