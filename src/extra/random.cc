/*
 * tvm.contrib.random.*, with apache-tvm 0.27's calling conventions and value semantics:
 *   randint(low, high, out)                     integers in [low, high) clipped to out's dtype
 *   uniform(low, high, out) | uniform(seed, seed2, low, high, out)      float32 (and float64)
 *   normal(loc, scale, out) | normal(seed, seed2, loc, scale, out)
 *   random_fill(out)                            values in [1, 10), any device (filled on the host)
 *   random_fill_for_measure(out)                the same, in parallel: inputs for timing runs
 * random_fill writes what 0.27 writes: real values for floats and 8-bit integers, and for 16/32/
 * 64-bit integers the bit pattern of those values as fp16/float/double (0.27 dispatches on the
 * width only); measurement tools need "some non-zero data", not meaningful integers.  Bools get
 * 0/1 (0.27 would store 1..9 in them).
 */
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/c_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "error_text.h"
#include "extra_register.h"
#include "half_bits.h"
#include "parallel_rows.h"
#include "random_engine.h"
#include "tensor_checks.h"

namespace tvm_runtime {
namespace extra {
namespace {

constexpr const char* kRandint = "tvm.contrib.random.randint";
constexpr const char* kUniform = "tvm.contrib.random.uniform";
constexpr const char* kNormal = "tvm.contrib.random.normal";
constexpr const char* kRandomFill = "tvm.contrib.random.random_fill";
constexpr const char* kRandomFillForMeasure = "tvm.contrib.random.random_fill_for_measure";

/* Any tensor argument (host or device), checked to be compact. */
DLTensor* AnyTensorArg(const ::tvm::ffi::PackedArgs& args, int index, const char* func) {
  auto tensor = args[index].try_cast<DLTensor*>();
  if (!tensor.has_value() || *tensor == nullptr) {
    backend::ThrowError(
        "TypeError",
        ErrorText(func, ": argument ", index, " must be a tensor, got ", args[index].GetTypeKey()));
  }
  if (!::tvm::ffi::IsContiguous(**tensor)) {
    backend::ThrowError("ValueError", ErrorText(func, ": the output tensor must be contiguous"));
  }
  return *tensor;
}

template <typename T>
void FillRandint(DLTensor* out, int64_t low, int64_t high) {
  // Clip the range to what T can hold (0.27 does the same), keeping `high` exclusive.
  low = std::max<int64_t>(low, static_cast<int64_t>(std::numeric_limits<T>::min()));
  if (static_cast<uint64_t>(std::numeric_limits<T>::max()) <
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    high = std::min<int64_t>(high, static_cast<int64_t>(std::numeric_limits<T>::max()) + 1);
  }
  if (high <= low) {
    backend::ThrowError("ValueError", ErrorText(kRandint, ": [low, high) is empty for dtype ",
                                                DTypeName(out->dtype)));
  }
  std::mt19937& engine = ThreadEngine();
  uint64_t span = static_cast<uint64_t>(high - low);
  T* data = reinterpret_cast<T*>(DataOf(out));
  int64_t n = NumElements(out);
  for (int64_t i = 0; i < n; ++i) {
    data[i] = static_cast<T>(low + static_cast<int64_t>(static_cast<uint64_t>(engine()) % span));
  }
}

void Randint(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  RequireArgCount(args, 3, kRandint, "(low, high, out)");
  int64_t low = args[0].cast<int64_t>();
  int64_t high = args[1].cast<int64_t>();
  DLTensor* out = CpuTensorArg(args, 2, kRandint, "out");
  if (high <= low) {
    backend::ThrowError("ValueError", ErrorText(kRandint, ": high (", high,
                                                ") must be bigger than low (", low, ")"));
  }
  DLDataType t = out->dtype;
  bool is_signed = t.code == kDLInt;
  if ((t.code != kDLInt && t.code != kDLUInt) || t.lanes != 1) {
    backend::ThrowError("ValueError",
                        ErrorText(kRandint, ": out has dtype ", DTypeName(t),
                                  "; randint fills integer tensors (int/uint 8, 16, 32, 64)"));
  }
  switch (t.bits) {
    case 8:
      return is_signed ? FillRandint<int8_t>(out, low, high) : FillRandint<uint8_t>(out, low, high);
    case 16:
      return is_signed ? FillRandint<int16_t>(out, low, high)
                       : FillRandint<uint16_t>(out, low, high);
    case 32:
      return is_signed ? FillRandint<int32_t>(out, low, high)
                       : FillRandint<uint32_t>(out, low, high);
    case 64:
      return is_signed ? FillRandint<int64_t>(out, low, high)
                       : FillRandint<uint64_t>(out, low, high);
    default:
      backend::ThrowError("ValueError", ErrorText(kRandint, ": unsupported dtype ", DTypeName(t)));
  }
}

/* (engine, a, b, out) of uniform/normal, in either the 3- or the 5-argument form. */
struct DistributionCall {
  std::mt19937* engine;
  double a;
  double b;
  DLTensor* out;
};

DistributionCall ParseDistributionCall(const ::tvm::ffi::PackedArgs& args, const char* func,
                                       const char* params) {
  DistributionCall call{};
  if (args.size() == 3) {
    call.engine = &ThreadEngine();
  } else if (args.size() == 5) {
    call.engine = &EngineForSeeds(args[0].cast<int64_t>(), args[1].cast<int64_t>());
  } else {
    backend::ThrowError("TypeError", ErrorText(func, " takes (", params, ", out) or (seed, seed2, ",
                                               params, ", out), got ", args.size(), " arguments"));
  }
  int first = args.size() == 5 ? 2 : 0;
  call.a = args[first].cast<double>();
  call.b = args[first + 1].cast<double>();
  call.out = CpuTensorArg(args, first + 2, func, "out");
  DLDataType t = call.out->dtype;
  if (t.code != kDLFloat || (t.bits != 32 && t.bits != 64)) {
    backend::ThrowError("ValueError", ErrorText(func, ": out has dtype ", DTypeName(t),
                                                "; it fills float32 (or float64) tensors"));
  }
  return call;
}

template <typename Dist>
void FillFrom(Dist dist, std::mt19937& engine, DLTensor* out) {
  int64_t n = NumElements(out);
  if (out->dtype.bits == 32) {
    float* data = reinterpret_cast<float*>(DataOf(out));
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(dist(engine));
  } else {
    double* data = reinterpret_cast<double*>(DataOf(out));
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<double>(dist(engine));
  }
}

void Uniform(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  DistributionCall call = ParseDistributionCall(args, kUniform, "low, high");
  // 0.27 samples in float precision; the same distribution object gives the same numbers.
  float low = static_cast<float>(call.a);
  float high = static_cast<float>(call.b);
  if (!(high > low)) {
    backend::ThrowError("ValueError", ErrorText(kUniform, ": high (", call.b,
                                                ") must be bigger than low (", call.a, ")"));
  }
  FillFrom(UniformFloat(low, high), *call.engine, call.out);
}

void Normal(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  DistributionCall call = ParseDistributionCall(args, kNormal, "loc, scale");
  float loc = static_cast<float>(call.a);
  float scale = static_cast<float>(call.b);
  if (!(scale > 0)) {
    backend::ThrowError("ValueError",
                        ErrorText(kNormal, ": scale (", call.b, ") must be positive"));
  }
  FillFrom(NormalFloat(loc, scale), *call.engine, call.out);
}

/* Writes elements [begin, end) of a host buffer of dtype `t` with values drawn from [1, 10). */
void FillMeasureValues(char* data, DLDataType t, int64_t begin, int64_t end, std::mt19937& engine) {
  std::uniform_real_distribution<double> dist(1.0, 10.0);
  for (int64_t i = begin; i < end; ++i) {
    double v = dist(engine);
    switch (t.bits) {
      case 8: {
        // A bool must hold 0 or 1; other 8-bit types get 1..9 as in 0.27.
        uint8_t b = t.code == kDLBool ? static_cast<uint8_t>(v >= 5.5) : static_cast<uint8_t>(v);
        std::memcpy(data + i, &b, 1);
        break;
      }
      case 16: {
        uint16_t h = t.code == kDLBfloat ? FloatToBfloat16Bits(static_cast<float>(v))
                                         : FloatToHalfBits(static_cast<float>(v));
        std::memcpy(data + 2 * i, &h, 2);
        break;
      }
      case 32: {
        float f = static_cast<float>(v);
        std::memcpy(data + 4 * i, &f, 4);
        break;
      }
      default:
        std::memcpy(data + 8 * i, &v, 8);
        break;
    }
  }
}

void RequireFillableDType(DLDataType t, const char* func) {
  bool ok = t.lanes == 1 && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64);
  if (!ok) {
    backend::ThrowError("ValueError", ErrorText(func, ": cannot fill dtype ", DTypeName(t),
                                                " (supported: 8/16/32/64-bit scalar types)"));
  }
}

/* Fills `out` (host or device) by running fill(host_data) on a host buffer when needed. */
template <typename Fill>
void FillOnHost(DLTensor* out, const char* func, Fill&& fill) {
  if (backend::IsHostDevice(out->device)) {
    fill(DataOf(out));
    return;
  }
  const TVMRuntimeDeviceAPI* api = TVMRuntimeGetDeviceAPI(out->device.device_type);
  if (api == nullptr) {
    backend::ThrowError("ValueError",
                        ErrorText(func, ": no backend serves device type ", out->device.device_type,
                                  " (is its tvm-runtime-* wheel installed?)"));
  }
  size_t nbytes = static_cast<size_t>(NumElements(out)) * ((out->dtype.bits + 7) / 8);
  std::vector<char> host(nbytes);
  fill(host.data());
  DLDevice cpu{kDLCPU, 0};
  backend::CheckCall(api->copy_data(api->self, host.data(), 0, out->data, out->byte_offset, nbytes,
                                    cpu, out->device, out->dtype, nullptr));
  backend::CheckCall(api->stream_sync(api->self, out->device.device_id, nullptr));
}

void RandomFill(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  RequireArgCount(args, 1, kRandomFill, "(out)");
  DLTensor* out = AnyTensorArg(args, 0, kRandomFill);
  RequireFillableDType(out->dtype, kRandomFill);
  int64_t n = NumElements(out);
  FillOnHost(out, kRandomFill,
             [&](char* data) { FillMeasureValues(data, out->dtype, 0, n, ThreadEngine()); });
}

void RandomFillForMeasure(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  RequireArgCount(args, 1, kRandomFillForMeasure, "(out)");
  DLTensor* out = AnyTensorArg(args, 0, kRandomFillForMeasure);
  RequireFillableDType(out->dtype, kRandomFillForMeasure);
  int64_t n = NumElements(out);
  // Chunks of a fixed size, each with its own engine seeded from the caller's, so threads never
  // share an engine and the values do not depend on how many threads run.
  constexpr int64_t kChunk = 1 << 16;
  int64_t chunks = (n + kChunk - 1) / kChunk;
  unsigned base_seed = ThreadEngine()();
  FillOnHost(out, kRandomFillForMeasure, [&](char* data) {
    ParallelRows(chunks, kChunk, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        std::mt19937 engine(base_seed + static_cast<unsigned>(c));
        FillMeasureValues(data, out->dtype, c * kChunk, std::min(n, (c + 1) * kChunk), engine);
      }
    });
  });
}

}  // namespace

void RegisterRandomFunctions() {
  backend::SetGlobalPackedFunction(kRandint, Randint);
  backend::SetGlobalPackedFunction(kUniform, Uniform);
  backend::SetGlobalPackedFunction(kNormal, Normal);
  backend::SetGlobalPackedFunction(kRandomFill, RandomFill);
  backend::SetGlobalPackedFunction(kRandomFillForMeasure, RandomFillForMeasure);
}

}  // namespace extra
}  // namespace tvm_runtime
