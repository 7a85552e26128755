/*
 * runtime.cuTensorMapEncodeTiled: the global that apache-tvm 0.27 host code calls to fill a
 * CUtensorMap (TMA descriptor) before launching a Hopper kernel that copies with
 * cp.async.bulk.tensor.  The host code owns the 128-byte, 64-byte aligned map (a stack buffer);
 * the kernel takes it by value as a `const __grid_constant__ CUtensorMap` parameter, which the
 * launcher passes from that host buffer (arg_extra_tags kTensorMap, cuda_launcher.cc).
 *
 * Arguments, in 0.27's order (rank = r):
 *   tensor_map (handle), dtype (DataType or its string), r (int), global_address (handle),
 *   globalDim[r], globalStrides[r-1] (bytes, the innermost stride is the element size),
 *   boxDim[r], elementStrides[r], interleave, swizzle, l2Promotion, oobFill
 *   [, force_cu_dtype: a CUtensorMapDataType that overrides the one derived from dtype, -1 none]
 *
 * Every rule of the driver's documentation is checked here first, so a bad argument is a
 * ValueError naming that argument instead of the driver's bare CUDA_ERROR_INVALID_VALUE.  The
 * driver entry point is optional (CUDA 12.0+ drivers): its absence is reported when a map is
 * first encoded, not when the backend loads.
 */
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "cuda_api.h"
#include "cuda_error.h"
#include "cuda_library.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

namespace {

constexpr const char* kGlobalName = "runtime.cuTensorMapEncodeTiled";
constexpr int kMaxRank = 5;

struct TensorMapRequest {
  CUtensorMap* map = nullptr;
  DLDataType dtype{};
  int cu_dtype = 0;
  uint64_t element_bytes = 0;  // 0 for the packed sub-byte types
  uint32_t rank = 0;
  void* address = nullptr;
  cuuint64_t dims[kMaxRank] = {};
  cuuint64_t strides[kMaxRank] = {};  // rank - 1 used; the driver reads none for rank 1
  cuuint32_t box[kMaxRank] = {};
  cuuint32_t element_strides[kMaxRank] = {};
  int interleave = 0, swizzle = 0, l2_promotion = 0, oob_fill = 0;

  bool packed() const {
    return cu_dtype == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B ||
           cu_dtype == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ||
           cu_dtype == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
  }
  bool packed_align16() const {
    return cu_dtype == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ||
           cu_dtype == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
  }
  bool floating() const {
    return cu_dtype >= CU_TENSOR_MAP_DATA_TYPE_FLOAT16 &&
           cu_dtype <= CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
  }
};

[[noreturn]] void Invalid(const std::string& what) {
  backend::ThrowError("ValueError", std::string(kGlobalName) + ": " + what);
}

template <typename T>
std::string Join(const T* values, uint32_t n) {
  std::ostringstream os;
  os << "[";
  for (uint32_t i = 0; i < n; ++i) os << (i ? "," : "") << values[i];
  os << "]";
  return os.str();
}

std::string Hex(const void* p) {
  std::ostringstream os;
  os << "0x" << std::hex << reinterpret_cast<uintptr_t>(p);
  return os.str();
}

std::string Indexed(const char* name, uint32_t i) {
  return std::string(name) + "[" + std::to_string(i) + "]";
}

int64_t IntArg(const ::tvm::ffi::PackedArgs& args, int i, const std::string& name) {
  auto v = args[i].try_cast<int64_t>();
  if (!v.has_value()) {
    Invalid(name + " (argument " + std::to_string(i) + ") must be an integer, got " +
            args[i].GetTypeKey());
  }
  return *v;
}

void* HandleArg(const ::tvm::ffi::PackedArgs& args, int i, const std::string& name) {
  auto v = args[i].try_cast<void*>();
  if (!v.has_value() || *v == nullptr) {
    Invalid(name + " (argument " + std::to_string(i) + ") must be a non-null pointer, got " +
            (v.has_value() ? std::string("NULL") : args[i].GetTypeKey()));
  }
  return *v;
}

/* 0.27's mapping from a TVM dtype to the descriptor's element type (integers of one byte are
 * moved as UINT8, float8 as bytes, float4_e2m1fn packed in pairs). */
int DescriptorType(DLDataType t) {
  if (t.lanes != 1) {
    Invalid("dtype must be a scalar type (lanes=1), got " + ::tvm::ffi::DLDataTypeToString(t));
  }
  switch (t.code) {
    case kDLInt:
      if (t.bits == 8) return CU_TENSOR_MAP_DATA_TYPE_UINT8;
      if (t.bits == 32) return CU_TENSOR_MAP_DATA_TYPE_INT32;
      if (t.bits == 64) return CU_TENSOR_MAP_DATA_TYPE_INT64;
      break;
    case kDLUInt:
      if (t.bits == 8) return CU_TENSOR_MAP_DATA_TYPE_UINT8;
      if (t.bits == 16) return CU_TENSOR_MAP_DATA_TYPE_UINT16;
      if (t.bits == 32) return CU_TENSOR_MAP_DATA_TYPE_UINT32;
      if (t.bits == 64) return CU_TENSOR_MAP_DATA_TYPE_UINT64;
      break;
    case kDLFloat:
      if (t.bits == 16) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
      if (t.bits == 32) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
      if (t.bits == 64) return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
      break;
    case kDLBfloat:
      if (t.bits == 16) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
      break;
    case kDLFloat8_e4m3fn:
    case kDLFloat8_e5m2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case kDLFloat4_e2m1fn:
      return CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    default:
      break;
  }
  Invalid("dtype " + ::tvm::ffi::DLDataTypeToString(t) +
          " has no TMA element type (supported: int8/32/64, uint8/16/32/64, float16/32/64, "
          "bfloat16, float8_e4m3fn, float8_e5m2, float4_e2m1fn)");
}

void ApplyForcedType(TensorMapRequest* r, int64_t forced) {
  if (forced == -1) return;
  if (forced == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32) {
    if (r->dtype.code != kDLFloat || r->dtype.bits != 32) {
      Invalid("force_cu_dtype=11 (TFLOAT32) needs a float32 dtype, got " +
              ::tvm::ffi::DLDataTypeToString(r->dtype));
    }
  } else if (forced >= CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B &&
             forced <= CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) {
    if (r->dtype.bits > 8) {
      Invalid("force_cu_dtype=" + std::to_string(forced) +
              " (a packed sub-byte type) needs a dtype of at most 8 bits, got " +
              ::tvm::ffi::DLDataTypeToString(r->dtype));
    }
  } else {
    Invalid(
        "force_cu_dtype must be -1 (use dtype), 11 (TFLOAT32) or 13..15 (packed sub-byte "
        "types), got " +
        std::to_string(forced));
  }
  r->cu_dtype = static_cast<int>(forced);
}

int EnumArg(const ::tvm::ffi::PackedArgs& args, int i, const char* name, int max,
            const char* values) {
  int64_t v = IntArg(args, i, name);
  if (v < 0 || v > max) {
    Invalid(std::string(name) + " must be one of " + values + ", got " + std::to_string(v));
  }
  return static_cast<int>(v);
}

TensorMapRequest Parse(const ::tvm::ffi::PackedArgs& args) {
  const int n = static_cast<int>(args.size());
  if (n < 4) {
    Invalid(
        "expects (tensor_map, dtype, rank, global_address, globalDim[rank], "
        "globalStrides[rank-1], boxDim[rank], elementStrides[rank], interleave, swizzle, "
        "l2Promotion, oobFill[, force_cu_dtype]), got " +
        std::to_string(n) + " arguments");
  }
  TensorMapRequest r;
  int64_t rank = IntArg(args, 2, "rank");
  if (rank < 1 || rank > kMaxRank) {
    Invalid("rank must be 1..5 (TMA tensors have at most 5 dimensions), got " +
            std::to_string(rank));
  }
  r.rank = static_cast<uint32_t>(rank);
  const int expected = static_cast<int>(4 + 4 * rank - 1 + 4);
  if (n != expected && n != expected + 1) {
    Invalid("rank " + std::to_string(rank) + " needs " + std::to_string(expected) +
            " arguments (or one more: force_cu_dtype): tensor_map, dtype, rank, global_address, " +
            std::to_string(rank) + " globalDim, " + std::to_string(rank - 1) + " globalStrides, " +
            std::to_string(rank) + " boxDim, " + std::to_string(rank) +
            " elementStrides, interleave, swizzle, l2Promotion, oobFill; got " + std::to_string(n));
  }

  r.map = static_cast<CUtensorMap*>(HandleArg(args, 0, "tensor_map"));
  if (reinterpret_cast<uintptr_t>(r.map) % 64 != 0) {
    Invalid("tensor_map must be 64-byte aligned (a CUtensorMap), got " + Hex(r.map));
  }
  auto dtype = args[1].try_cast<DLDataType>();
  if (!dtype.has_value()) {
    Invalid("dtype (argument 1) must be a data type or its name, got " + args[1].GetTypeKey());
  }
  r.dtype = *dtype;
  r.cu_dtype = DescriptorType(r.dtype);
  r.address = HandleArg(args, 3, "global_address");

  int i = 4;
  for (uint32_t d = 0; d < r.rank; ++d, ++i) {
    int64_t v = IntArg(args, i, Indexed("globalDim", d));
    if (v < 1 || static_cast<uint64_t>(v) > (uint64_t{1} << 32)) {
      Invalid(Indexed("globalDim", d) + " must be in 1..2^32, got " + std::to_string(v));
    }
    r.dims[d] = static_cast<cuuint64_t>(v);
  }
  for (uint32_t d = 0; d + 1 < r.rank; ++d, ++i) {
    int64_t v = IntArg(args, i, Indexed("globalStrides", d));
    if (v < 0 || v % 16 != 0 || static_cast<uint64_t>(v) >= (uint64_t{1} << 40)) {
      Invalid(Indexed("globalStrides", d) +
              " (bytes) must be a multiple of 16 and less than 2^40, got " + std::to_string(v));
    }
    r.strides[d] = static_cast<cuuint64_t>(v);
  }
  for (uint32_t d = 0; d < r.rank; ++d, ++i) {
    int64_t v = IntArg(args, i, Indexed("boxDim", d));
    if (v < 1 || v > 256) {
      Invalid(Indexed("boxDim", d) + " must be in 1..256, got " + std::to_string(v));
    }
    r.box[d] = static_cast<cuuint32_t>(v);
  }
  for (uint32_t d = 0; d < r.rank; ++d, ++i) {
    int64_t v = IntArg(args, i, Indexed("elementStrides", d));
    if (v < 1 || v > 8) {
      Invalid(Indexed("elementStrides", d) + " must be in 1..8, got " + std::to_string(v));
    }
    r.element_strides[d] = static_cast<cuuint32_t>(v);
  }
  r.interleave =
      EnumArg(args, i++, "interleave", CU_TENSOR_MAP_INTERLEAVE_32B, "0 (NONE), 1 (16B), 2 (32B)");
  r.swizzle = EnumArg(args, i++, "swizzle", CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B,
                      "0 (NONE), 1 (32B), 2 (64B), 3 (128B), 4..6 (128B atoms, CUDA 12.8+)");
  r.l2_promotion = EnumArg(args, i++, "l2Promotion", CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                           "0 (NONE), 1 (64B), 2 (128B), 3 (256B)");
  r.oob_fill = EnumArg(args, i++, "oobFill", CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
                       "0 (NONE), 1 (NAN_REQUEST_ZERO_FMA)");
  if (i < n) ApplyForcedType(&r, IntArg(args, i, "force_cu_dtype"));
  r.element_bytes = r.packed() ? 0 : (static_cast<uint64_t>(r.dtype.bits) + 7) / 8;
  if (r.cu_dtype == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32) r.element_bytes = 4;
  return r;
}

/* The rules that tie the arguments together (the driver documentation's "requirements"). */
void CheckCombination(const TensorMapRequest& r) {
  const bool align32 = r.interleave == CU_TENSOR_MAP_INTERLEAVE_32B || r.packed_align16();
  const uintptr_t address = reinterpret_cast<uintptr_t>(r.address);
  if (address % (align32 ? 32 : 16) != 0) {
    Invalid(std::string("global_address must be ") + (align32 ? "32" : "16") +
            "-byte aligned, got " + Hex(r.address));
  }
  if (align32) {
    for (uint32_t d = 0; d + 1 < r.rank; ++d) {
      if (r.strides[d] % 32 != 0) {
        Invalid(Indexed("globalStrides", d) +
                " must be a multiple of 32 with 32B interleave or a packed 16-byte aligned type, "
                "got " +
                std::to_string(r.strides[d]));
      }
    }
  }
  if (r.element_strides[0] != 1) {
    Invalid("elementStrides[0] must be 1 (tiled TMA has no innermost element stride), got " +
            std::to_string(r.element_strides[0]));
  }
  if (r.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && r.rank < 3) {
    Invalid("interleave " + std::to_string(r.interleave) + " needs rank >= 3, got rank " +
            std::to_string(r.rank));
  }
  if (r.interleave == CU_TENSOR_MAP_INTERLEAVE_32B && r.swizzle != CU_TENSOR_MAP_SWIZZLE_32B) {
    Invalid("interleave 2 (32B) needs swizzle 1 (32B), got swizzle " + std::to_string(r.swizzle));
  }
  if (r.packed_align16()) {
    if (r.dims[0] % 128 != 0) {
      Invalid("globalDim[0] must be a multiple of 128 for packed 16-byte aligned types, got " +
              std::to_string(r.dims[0]));
    }
    if (r.box[0] != 128) {
      Invalid("boxDim[0] must be 128 for packed 16-byte aligned types, got " +
              std::to_string(r.box[0]));
    }
  }
  if (r.cu_dtype == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B &&
      r.swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && r.swizzle != CU_TENSOR_MAP_SWIZZLE_128B &&
      r.swizzle != CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B) {
    Invalid("swizzle " + std::to_string(r.swizzle) +
            " is not allowed for 16U4_ALIGN16B (float4_e2m1fn): use 0, 3 or 4");
  }
  if (r.cu_dtype == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && r.dims[0] % 2 != 0) {
    Invalid("globalDim[0] must be even for 16U4_ALIGN8B, got " + std::to_string(r.dims[0]));
  }
  if (r.oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
      (!r.floating() || r.packed())) {
    Invalid("oobFill 1 (NAN_REQUEST_ZERO_FMA) needs a floating-point dtype, got " +
            ::tvm::ffi::DLDataTypeToString(r.dtype));
  }
  if (r.packed() || r.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) return;
  const uint64_t inner_bytes = r.box[0] * r.element_bytes;
  if (inner_bytes % 16 != 0) {
    Invalid("boxDim[0] * element size must be a multiple of 16 bytes, got " +
            std::to_string(r.box[0]) + " * " + std::to_string(r.element_bytes) + " = " +
            std::to_string(inner_bytes));
  }
  uint64_t swizzle_span = 0;
  if (r.swizzle == CU_TENSOR_MAP_SWIZZLE_32B) swizzle_span = 32;
  if (r.swizzle == CU_TENSOR_MAP_SWIZZLE_64B) swizzle_span = 64;
  if (r.swizzle >= CU_TENSOR_MAP_SWIZZLE_128B) swizzle_span = 128;
  if (swizzle_span != 0 && inner_bytes > swizzle_span) {
    Invalid("swizzle " + std::to_string(r.swizzle) + " (" + std::to_string(swizzle_span) +
            "B) needs boxDim[0] * element size <= " + std::to_string(swizzle_span) +
            " bytes, got " + std::to_string(inner_bytes));
  }
}

std::string Describe(const TensorMapRequest& r) {
  std::ostringstream os;
  os << "dtype=" << ::tvm::ffi::DLDataTypeToString(r.dtype) << " (CUtensorMapDataType "
     << r.cu_dtype << "), rank=" << r.rank << ", globalDim=" << Join(r.dims, r.rank)
     << ", globalStrides=" << Join(r.strides, r.rank - 1) << ", boxDim=" << Join(r.box, r.rank)
     << ", elementStrides=" << Join(r.element_strides, r.rank) << ", interleave=" << r.interleave
     << ", swizzle=" << r.swizzle << ", l2Promotion=" << r.l2_promotion
     << ", oobFill=" << r.oob_fill;
  return os.str();
}

CuTensorMapEncodeTiledFn DriverEntryPoint() {
  CudaRuntime& rt = CudaRuntime::Global();
  if (!rt.Available()) {
    backend::ThrowError("RuntimeError", std::string(kGlobalName) +
                                            " needs a CUDA device and driver: " + rt.Status());
  }
  CuTensorMapEncodeTiledFn fn = rt.api().TensorMapEncodeTiled;
  if (fn == nullptr) {
    const int v = rt.DriverVersion();
    backend::ThrowError(
        "RuntimeError",
        std::string(kGlobalName) + " needs a CUDA 12+ driver: the NVIDIA driver (" +
            GetCudaLibrary().path + ", CUDA " + std::to_string(v / 1000) + "." +
            std::to_string(v % 1000 / 10) +
            ") does not export cuTensorMapEncodeTiled. TMA kernels (Hopper, sm_90+) need "
            "driver R525 or newer: update the NVIDIA driver.");
  }
  return fn;
}

void EncodeTiled(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any* /*rv*/) {
  // All validation happens before the driver is even opened.
  const TensorMapRequest r = Parse(args);
  CheckCombination(r);
  CuTensorMapEncodeTiledFn encode = DriverEntryPoint();
  CUresult rc =
      encode(r.map, static_cast<CUtensorMapDataType>(r.cu_dtype), r.rank, r.address, r.dims,
             r.strides, r.box, r.element_strides, static_cast<CUtensorMapInterleave>(r.interleave),
             static_cast<CUtensorMapSwizzle>(r.swizzle),
             static_cast<CUtensorMapL2promotion>(r.l2_promotion),
             static_cast<CUtensorMapFloatOOBfill>(r.oob_fill));
  if (rc != CUDA_SUCCESS)
    ThrowCuError(rc, std::string("cuTensorMapEncodeTiled(") + Describe(r) + ")");
}

}  // namespace

void RegisterTensorMapGlobals() { backend::SetGlobalPackedFunction(kGlobalName, EncodeTiled); }

}  // namespace cuda
}  // namespace tvm_runtime
