/*
 * Converting the packed kernel arguments of a TVM host call into the fixed-width values a GPU
 * launch API wants, per the kernel's `arg_types`.  Buffers arrive as opaque device handles
 * (the `data` of a DLTensor), scalars as Int/Float; 32-bit scalars are narrowed.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_KERNEL_ARGS_H_
#define TVM_RUNTIME_BACKEND_GPU_KERNEL_ARGS_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/error.h>

#include <cstring>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace backend {

union ArgValue {
  int32_t v_int32;
  uint32_t v_uint32;
  float v_float32;
  int64_t v_int64;
  uint64_t v_uint64;
  double v_float64;
  void* v_handle;
};

enum class ArgKind : uint8_t { kHandle, kInt32, kUInt32, kFloat32, kInt64, kUInt64, kFloat64 };

inline ArgKind ClassifyArg(DLDataType t, const std::string& kernel, size_t index) {
  if (t.lanes == 1) {
    if (t.code == kDLOpaqueHandle) return ArgKind::kHandle;
    if (t.code == kDLInt && t.bits == 32) return ArgKind::kInt32;
    if (t.code == kDLInt && t.bits == 64) return ArgKind::kInt64;
    if (t.code == kDLUInt && t.bits == 32) return ArgKind::kUInt32;
    if (t.code == kDLUInt && t.bits == 64) return ArgKind::kUInt64;
    if (t.code == kDLFloat && t.bits == 32) return ArgKind::kFloat32;
    if (t.code == kDLFloat && t.bits == 64) return ArgKind::kFloat64;
  }
  ThrowError("TypeError", "kernel '" + kernel + "' argument " + std::to_string(index) +
                              " has unsupported type (code " + std::to_string(t.code) + ", bits " +
                              std::to_string(t.bits) + ", lanes " + std::to_string(t.lanes) + ")");
}

/* Size in bytes of the value a kernel parameter of this kind occupies. */
inline size_t ArgSize(ArgKind k) {
  switch (k) {
    case ArgKind::kHandle:
      return sizeof(void*);
    case ArgKind::kInt32:
    case ArgKind::kUInt32:
    case ArgKind::kFloat32:
      return 4;
    default:
      return 8;
  }
}

/* Device handle carried by a packed buffer argument (OpaquePtr, None, DLTensor* or Tensor). */
inline void* ArgHandle(const TVMFFIAny& a) {
  if (a.type_index == kTVMFFINone) return nullptr;
  if (a.type_index == kTVMFFIOpaquePtr) return a.v_ptr;
  if (a.type_index == kTVMFFIDLTensorPtr) return static_cast<DLTensor*>(a.v_ptr)->data;
  if (a.type_index == kTVMFFITensor) return TVMFFITensorGetDLTensorPtr(a.v_obj)->data;
  ThrowError("TypeError", "expected a buffer handle for a kernel argument");
}

inline double ArgFloat(const TVMFFIAny& a) {
  if (a.type_index == kTVMFFIFloat) return a.v_float64;
  if (a.type_index == kTVMFFIInt || a.type_index == kTVMFFIBool) {
    return static_cast<double>(a.v_int64);
  }
  ThrowError("TypeError", "expected a float scalar kernel argument");
}

inline int64_t ArgInt(const TVMFFIAny& a) {
  if (a.type_index == kTVMFFIInt || a.type_index == kTVMFFIBool) return a.v_int64;
  ThrowError("TypeError", "expected an integer scalar kernel argument");
}

/* Precomputed per-kernel argument conversion. */
class KernelArgs {
 public:
  KernelArgs() = default;
  KernelArgs(const std::vector<DLDataType>& arg_types, const std::string& kernel) {
    kinds_.reserve(arg_types.size());
    for (size_t i = 0; i < arg_types.size(); ++i)
      kinds_.push_back(ClassifyArg(arg_types[i], kernel, i));
  }
  size_t size() const { return kinds_.size(); }
  ArgKind kind(size_t i) const { return kinds_[i]; }

  /* Fills out[0..size()) from the packed args. */
  void Convert(const TVMFFIAny* args, ArgValue* out) const {
    for (size_t i = 0; i < kinds_.size(); ++i) {
      ArgValue v;
      v.v_uint64 = 0;
      switch (kinds_[i]) {
        case ArgKind::kHandle:
          v.v_handle = ArgHandle(args[i]);
          break;
        case ArgKind::kInt32:
          v.v_int32 = static_cast<int32_t>(ArgInt(args[i]));
          break;
        case ArgKind::kUInt32:
          v.v_uint32 = static_cast<uint32_t>(ArgInt(args[i]));
          break;
        case ArgKind::kInt64:
          v.v_int64 = ArgInt(args[i]);
          break;
        case ArgKind::kUInt64:
          v.v_uint64 = static_cast<uint64_t>(ArgInt(args[i]));
          break;
        case ArgKind::kFloat32:
          v.v_float32 = static_cast<float>(ArgFloat(args[i]));
          break;
        case ArgKind::kFloat64:
          v.v_float64 = ArgFloat(args[i]);
          break;
      }
      out[i] = v;
    }
  }

 private:
  std::vector<ArgKind> kinds_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_KERNEL_ARGS_H_
