#include "reduce.h"

#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "../half_bits.h"

namespace tvm_runtime {
namespace extra {
namespace disco {
namespace {

template <typename T>
inline T Combine(T a, T b, ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kProd:
      return static_cast<T>(a * b);
    case ReduceKind::kMin:
      return std::min(a, b);
    case ReduceKind::kMax:
      return std::max(a, b);
    default:  // kSum, and kAvg (divided afterwards)
      return static_cast<T>(a + b);
  }
}

// out[i] = a[i] op b[i] (out may be a or b): one loop per kind, so the compiler vectorises each.
template <typename T>
void CombineTyped(T* out, const T* a, const T* b, int64_t count, ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kProd:
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(a[i] * b[i]);
      break;
    case ReduceKind::kMin:
      for (int64_t i = 0; i < count; ++i) out[i] = std::min(a[i], b[i]);
      break;
    case ReduceKind::kMax:
      for (int64_t i = 0; i < count; ++i) out[i] = std::max(a[i], b[i]);
      break;
    default:
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(a[i] + b[i]);
      break;
  }
}

template <typename T>
void ReduceIntoTyped(T* acc, const T* in, int64_t count, ReduceKind kind) {
  CombineTyped(acc, acc, in, count, kind);
}

template <typename T>
void DivideTyped(T* data, int64_t count, int n) {
  for (int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(data[i] / static_cast<T>(n));
}

template <typename T>
void ReduceManyTyped(T* out, const T* const* ins, int n, int64_t count, ReduceKind kind) {
  if (n == 1) {
    if (out != ins[0]) std::memcpy(out, ins[0], static_cast<size_t>(count) * sizeof(T));
    return;
  }
  // The first two inputs in one pass: no copy of the first into `out` beforehand.
  CombineTyped(out, ins[0], ins[1], count, kind);
  for (int k = 2; k < n; ++k) ReduceIntoTyped(out, ins[k], count, kind);
  if (kind == ReduceKind::kAvg) DivideTyped(out, count, n);
}

// 16-bit floats: widen a block of every input, reduce in float32, narrow once.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void ReduceManyHalf(uint16_t* out, const uint16_t* const* ins, int n, int64_t count,
                    ReduceKind kind) {
  constexpr int64_t kBlock = 512;
  float acc[kBlock];
  float in[kBlock];
  for (int64_t start = 0; start < count; start += kBlock) {
    int64_t len = std::min(kBlock, count - start);
    for (int64_t i = 0; i < len; ++i) acc[i] = Widen(ins[0][start + i]);
    for (int k = 1; k < n; ++k) {
      for (int64_t i = 0; i < len; ++i) in[i] = Widen(ins[k][start + i]);
      ReduceIntoTyped(acc, in, len, kind);
    }
    if (kind == ReduceKind::kAvg) DivideTyped(acc, len, n);
    for (int64_t i = 0; i < len; ++i) out[start + i] = Narrow(acc[i]);
  }
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void ReduceIntoHalf(uint16_t* acc, const uint16_t* in, int64_t count, ReduceKind kind) {
  for (int64_t i = 0; i < count; ++i) acc[i] = Narrow(Combine(Widen(acc[i]), Widen(in[i]), kind));
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void DivideHalf(uint16_t* data, int64_t count, int n) {
  for (int64_t i = 0; i < count; ++i) data[i] = Narrow(Widen(data[i]) / static_cast<float>(n));
}

bool IsHalf(DLDataType t) { return t.code == kDLFloat && t.bits == 16; }
bool IsBfloat16(DLDataType t) { return t.code == kDLBfloat && t.bits == 16; }

/* Calls f(T*) with a null pointer of the C++ type of `dtype` (integers and float32/64). */
template <typename F>
bool VisitPlainType(DLDataType t, F&& f) {
  if (t.lanes != 1) return false;
  if (t.code == kDLInt) {
    switch (t.bits) {
      case 8:
        return f(static_cast<int8_t*>(nullptr)), true;
      case 16:
        return f(static_cast<int16_t*>(nullptr)), true;
      case 32:
        return f(static_cast<int32_t*>(nullptr)), true;
      case 64:
        return f(static_cast<int64_t*>(nullptr)), true;
    }
  } else if (t.code == kDLUInt) {
    switch (t.bits) {
      case 8:
        return f(static_cast<uint8_t*>(nullptr)), true;
      case 16:
        return f(static_cast<uint16_t*>(nullptr)), true;
      case 32:
        return f(static_cast<uint32_t*>(nullptr)), true;
      case 64:
        return f(static_cast<uint64_t*>(nullptr)), true;
    }
  } else if (t.code == kDLFloat && (t.bits == 32 || t.bits == 64)) {
    return t.bits == 32 ? (f(static_cast<float*>(nullptr)), true)
                        : (f(static_cast<double*>(nullptr)), true);
  }
  return false;
}

}  // namespace

const char* ReduceKindName(ReduceKind kind) {
  static const char* names[] = {"sum", "prod", "min", "max", "avg"};
  int k = static_cast<int>(kind);
  return k >= 0 && k < 5 ? names[k] : "unknown";
}

void CheckReducible(DLDataType dtype, const char* func) {
  if (dtype.lanes == 1 && (IsHalf(dtype) || IsBfloat16(dtype))) return;
  if (VisitPlainType(dtype, [](auto*) {})) return;
  TVM_FFI_THROW(ValueError) << func << ": cannot reduce elements of dtype "
                            << ::tvm::ffi::DLDataTypeToString(dtype)
                            << " (supported: int8-64, uint8-64, float16, bfloat16, float32, "
                               "float64)";
}

void ReduceMany(void* out, const void* const* ins, int n, int64_t count, DLDataType dtype,
                ReduceKind kind) {
  if (IsHalf(dtype)) {
    ReduceManyHalf<HalfBitsToFloat, FloatToHalfBits>(
        static_cast<uint16_t*>(out), reinterpret_cast<const uint16_t* const*>(ins), n, count, kind);
  } else if (IsBfloat16(dtype)) {
    ReduceManyHalf<Bfloat16BitsToFloat, FloatToBfloat16Bits>(
        static_cast<uint16_t*>(out), reinterpret_cast<const uint16_t* const*>(ins), n, count, kind);
  } else {
    VisitPlainType(dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      ReduceManyTyped(static_cast<T*>(out), reinterpret_cast<const T* const*>(ins), n, count, kind);
    });
  }
}

void ReduceInto(void* acc, const void* in, int64_t count, DLDataType dtype, ReduceKind kind) {
  if (IsHalf(dtype)) {
    ReduceIntoHalf<HalfBitsToFloat, FloatToHalfBits>(static_cast<uint16_t*>(acc),
                                                     static_cast<const uint16_t*>(in), count, kind);
  } else if (IsBfloat16(dtype)) {
    ReduceIntoHalf<Bfloat16BitsToFloat, FloatToBfloat16Bits>(
        static_cast<uint16_t*>(acc), static_cast<const uint16_t*>(in), count, kind);
  } else {
    VisitPlainType(dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      ReduceIntoTyped(static_cast<T*>(acc), static_cast<const T*>(in), count, kind);
    });
  }
}

void FinishAverage(void* data, int64_t count, DLDataType dtype, int n) {
  if (IsHalf(dtype)) {
    DivideHalf<HalfBitsToFloat, FloatToHalfBits>(static_cast<uint16_t*>(data), count, n);
  } else if (IsBfloat16(dtype)) {
    DivideHalf<Bfloat16BitsToFloat, FloatToBfloat16Bits>(static_cast<uint16_t*>(data), count, n);
  } else {
    VisitPlainType(dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      DivideTyped(static_cast<T*>(data), count, n);
    });
  }
}

bool IsHalfFloat(DLDataType dtype) {
  return dtype.lanes == 1 && (IsHalf(dtype) || IsBfloat16(dtype));
}

void WidenToFloat(const void* in, float* out, int64_t count, DLDataType dtype) {
  const uint16_t* bits = static_cast<const uint16_t*>(in);
  bool half = IsHalf(dtype);
  for (int64_t i = 0; i < count; ++i)
    out[i] = half ? HalfBitsToFloat(bits[i]) : Bfloat16BitsToFloat(bits[i]);
}

void NarrowFromFloat(const float* in, void* out, int64_t count, DLDataType dtype) {
  uint16_t* bits = static_cast<uint16_t*>(out);
  bool half = IsHalf(dtype);
  for (int64_t i = 0; i < count; ++i)
    bits[i] = half ? FloatToHalfBits(in[i]) : FloatToBfloat16Bits(in[i]);
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime
