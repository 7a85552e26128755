/*
 * The `relax.run.*` functions compiled Relax models call by name, which apache-tvm 0.27 registers
 * from its Python package (numpy code), here in C++ with 0.27's results, dtypes and devices:
 *
 *   relax.run.unique(x, sorted, return_index, return_inverse, return_counts[, axis])   R.unique
 *       numpy.unique's answer: the unique values (x's dtype), then, when asked for, the index of
 *       each one's first occurrence, the inverse (x's shape when axis is absent, numpy 2's
 *       layout; 1-D along an axis) and the counts, all int64, as a tuple when any is asked for.
 *       sorted=False lists the values in order of first occurrence (inverse and counts follow).
 *       Floats: NaNs sort last; without an axis all NaNs are one value, along an axis a slice
 *       holding NaN equals no other (numpy compares slices element by element).
 *   relax.run.nonzero(x) -> int64[max(ndim, 1), count]: the coordinates of the non-zero elements
 *   relax.run.shape_to_tensor(shape) -> int64[len(shape)] (float64[0] for an empty shape: numpy's
 *       dtype of an empty list)                                     R.shape_to_tensor, symbolic
 *
 * As in 0.27, inputs on a device are read back to the host and every result is a new CPU tensor.
 * relax.run.print and relax.run.assert_op format with Python's str.format, so they are
 * registered by the tvm Python package (tvm/runtime/_relax_run.py).
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "../ffi_names.h"
#include "allocators.h"
#include "vm_init.h"

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

constexpr DLDataType kInt64{kDLInt, 64, 1};
constexpr DLDataType kFloat64{kDLFloat, 64, 1};

ffi::Tensor NewHostTensor(const std::vector<int64_t>& shape, DLDataType dtype) {
  DLDevice cpu{kDLCPU, 0};
  return GetAllocator(cpu, static_cast<int>(AllocatorType::kNaive))
      ->Empty(ffi::ShapeView(shape.data(), shape.size()), dtype);
}

template <typename T>
T* Data(const ffi::Tensor& t) {
  const DLTensor* dl = t.GetDLTensorPtr();
  return reinterpret_cast<T*>(static_cast<char*>(dl->data) + dl->byte_offset);
}

/* The input on the host, compact, with an element type this file can order and compare. */
ffi::Tensor HostInput(const ffi::Tensor& x, const char* who) {
  DLDataType t = x.dtype();
  bool width_ok = t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  bool ok = t.lanes == 1 && ((t.code == kDLInt && width_ok) || (t.code == kDLUInt && width_ok) ||
                             (t.code == kDLFloat && t.bits >= 16 && width_ok) ||
                             (t.code == kDLBfloat && t.bits == 16) || (t.code == kDLBool));
  if (t.code == kDLUInt && t.bits == 1 && t.lanes == 1) ok = true;  // bool as uint1
  if (!ok) {
    backend::ThrowError("TypeError", std::string(who) + ": element type " +
                                         std::string(ffi::DLDataTypeToString(t)) +
                                         " is not supported (integers, bool, float16/32/64 and "
                                         "bfloat16 are)");
  }
  if (!x.IsContiguous()) {
    backend::ThrowError("ValueError", std::string(who) + ": the input must be contiguous");
  }
  DLDevice cpu{kDLCPU, 0};
  return TensorOnDevice(x, cpu, GetAllocator(cpu, static_cast<int>(AllocatorType::kNaive)));
}

size_t ElementBytes(DLDataType t) { return t.bits < 8 ? 1 : t.bits / 8; }

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1Fu) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/* One element as a number: exactly for every supported type (integers as themselves). */
struct Element {
  enum Kind { kSigned, kUnsigned, kFloat } kind;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;

  bool IsNaN() const { return kind == kFloat && std::isnan(f); }
  bool IsZero() const { return kind == kFloat ? f == 0 : (kind == kSigned ? i == 0 : u == 0); }
};

Element Read(const char* p, DLDataType t) {
  Element e{Element::kFloat};
  if (t.code == kDLInt) {
    e.kind = Element::kSigned;
    switch (t.bits) {
      case 8:
        e.i = *reinterpret_cast<const int8_t*>(p);
        break;
      case 16:
        e.i = *reinterpret_cast<const int16_t*>(p);
        break;
      case 32:
        e.i = *reinterpret_cast<const int32_t*>(p);
        break;
      default:
        e.i = *reinterpret_cast<const int64_t*>(p);
    }
  } else if (t.code == kDLUInt || t.code == kDLBool) {
    e.kind = Element::kUnsigned;
    switch (ElementBytes(t)) {
      case 1:
        e.u = *reinterpret_cast<const uint8_t*>(p);
        break;
      case 2:
        e.u = *reinterpret_cast<const uint16_t*>(p);
        break;
      case 4:
        e.u = *reinterpret_cast<const uint32_t*>(p);
        break;
      default:
        e.u = *reinterpret_cast<const uint64_t*>(p);
    }
  } else if (t.code == kDLBfloat) {
    uint32_t bits = static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(p)) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof(v));
    e.f = v;
  } else if (t.bits == 16) {
    e.f = HalfToFloat(*reinterpret_cast<const uint16_t*>(p));
  } else if (t.bits == 32) {
    e.f = *reinterpret_cast<const float*>(p);
  } else {
    e.f = *reinterpret_cast<const double*>(p);
  }
  return e;
}

/* numpy's sort order: numeric, -0.0 equal to +0.0, NaN after everything (and equal to NaN). */
uint64_t OrderKey(const Element& e) {
  constexpr uint64_t kSign = uint64_t{1} << 63;
  switch (e.kind) {
    case Element::kSigned:
      return static_cast<uint64_t>(e.i) ^ kSign;
    case Element::kUnsigned:
      return e.u;
    case Element::kFloat:
      break;
  }
  if (std::isnan(e.f)) return ~uint64_t{0};
  double v = e.f == 0 ? 0.0 : e.f;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return (bits & kSign) ? ~bits : (bits | kSign);
}

/* The items numpy.unique compares: the elements (no axis) or the slices along `axis`, each as
 * the order keys of its elements, plus whether it holds a NaN. */
struct Items {
  int64_t count = 0;
  int64_t width = 1;  // elements per item
  std::vector<uint64_t> keys;
  std::vector<char> has_nan;

  bool Less(int64_t a, int64_t b) const {
    const uint64_t* ka = &keys[a * width];
    const uint64_t* kb = &keys[b * width];
    return std::lexicographical_compare(ka, ka + width, kb, kb + width);
  }
  // Without an axis NaN equals NaN (numpy's equal_nan); along an axis NaN equals nothing.
  bool Equal(int64_t a, int64_t b, bool nan_is_equal) const {
    if (!nan_is_equal && (has_nan[a] || has_nan[b])) return false;
    return std::equal(&keys[a * width], &keys[a * width] + width, &keys[b * width]);
  }
};

/* Geometry of `x` seen as [outer, n, inner] around `axis` (no axis: [1, numel, 1]). */
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisView ViewAround(const ffi::Tensor& x, int64_t axis) {
  AxisView v;
  if (axis < 0) {
    v.n = x.numel();
    return v;
  }
  for (int64_t d = 0; d < x.ndim(); ++d) {
    if (d < axis) v.outer *= x.shape()[d];
    if (d > axis) v.inner *= x.shape()[d];
  }
  v.n = x.shape()[axis];
  return v;
}

Items ReadItems(const ffi::Tensor& host, const AxisView& v) {
  DLDataType t = host.dtype();
  size_t bytes = ElementBytes(t);
  const char* base = Data<const char>(host);
  Items items;
  items.count = v.n;
  items.width = v.outer * v.inner;
  items.keys.resize(static_cast<size_t>(items.count * items.width));
  items.has_nan.assign(static_cast<size_t>(items.count), 0);
  // Item j's elements in the order numpy compares them: moveaxis(x, axis, 0)[j] flattened.
  for (int64_t j = 0; j < v.n; ++j) {
    int64_t k = 0;
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i, ++k) {
        Element e = Read(base + ((o * v.n + j) * v.inner + i) * bytes, t);
        items.keys[j * items.width + k] = OrderKey(e);
        if (e.IsNaN()) items.has_nan[j] = 1;
      }
    }
  }
  return items;
}

/* int64 flag argument (a Relax PrimValue or a bool). */
bool Flag(const ffi::AnyView& v, const char* what) {
  if (auto b = v.try_cast<bool>()) return *b;
  if (auto i = v.try_cast<int64_t>()) return *i != 0;
  backend::ThrowError("TypeError", std::string("relax.run.unique: ") + what +
                                       " must be a bool or an int, got " + v.GetTypeKey());
}

ffi::Tensor Int64Vector(const std::vector<int64_t>& values, std::vector<int64_t> shape) {
  ffi::Tensor out = NewHostTensor(shape, kInt64);
  if (!values.empty()) std::memcpy(Data<int64_t>(out), values.data(), values.size() * 8);
  return out;
}

void Unique(ffi::PackedArgs args, ffi::Any* rv) {
  const char* who = "relax.run.unique";
  if (args.size() != 5 && args.size() != 6) {
    backend::ThrowError("TypeError", std::string(who) +
                                         " takes (x, sorted, return_index, return_inverse, "
                                         "return_counts[, axis]), got " +
                                         std::to_string(args.size()) + " arguments");
  }
  auto input = args[0].try_cast<ffi::Tensor>();
  if (!input.has_value()) {
    backend::ThrowError("TypeError",
                        std::string(who) + ": x must be a tensor, got " + args[0].GetTypeKey());
  }
  bool sorted = Flag(args[1], "sorted");
  bool want_index = Flag(args[2], "return_index");
  bool want_inverse = Flag(args[3], "return_inverse");
  bool want_counts = Flag(args[4], "return_counts");
  int64_t axis = -1;
  if (args.size() == 6 && args[5] != nullptr) {
    auto a = args[5].try_cast<int64_t>();
    int64_t ndim = input->ndim();
    if (!a.has_value() || *a < -ndim || *a >= ndim) {
      backend::ThrowError(
          "IndexError", std::string(who) + ": axis " + (a.has_value() ? std::to_string(*a) : "?") +
                            " is out of bounds for a tensor of dimension " + std::to_string(ndim));
    }
    axis = *a < 0 ? *a + ndim : *a;
  }
  ffi::Tensor host = HostInput(*input, who);
  AxisView view = ViewAround(host, axis);
  Items items = ReadItems(host, view);

  // Stable sort: each group's first item is its first occurrence, as numpy's mergesort gives.
  std::vector<int64_t> perm(static_cast<size_t>(items.count));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return items.Less(a, b); });
  std::vector<int64_t> first, counts, inverse(static_cast<size_t>(items.count));
  for (size_t i = 0; i < perm.size(); ++i) {
    if (i == 0 || !items.Equal(perm[i - 1], perm[i], /*nan_is_equal=*/axis < 0)) {
      first.push_back(perm[i]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[perm[i]] = static_cast<int64_t>(first.size()) - 1;
  }
  // The groups in output order: sorted, or by first occurrence.
  std::vector<int64_t> order(first.size());
  std::iota(order.begin(), order.end(), 0);
  if (!sorted) {
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    std::vector<int64_t> rank(order.size());
    for (size_t j = 0; j < order.size(); ++j) rank[order[j]] = static_cast<int64_t>(j);
    for (int64_t& g : inverse) g = rank[g];
  }
  int64_t k = static_cast<int64_t>(order.size());

  // Values: the first occurrence of each group (slices along the axis), in output order.
  std::vector<int64_t> value_shape(host.shape().begin(), host.shape().end());
  if (axis < 0) {
    value_shape = {k};
  } else {
    value_shape[axis] = k;
  }
  ffi::Tensor values = NewHostTensor(value_shape, host.dtype());
  size_t row_bytes = static_cast<size_t>(view.inner) * ElementBytes(host.dtype());
  const char* src = Data<const char>(host);
  char* dst = Data<char>(values);
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(dst + (o * k + j) * row_bytes, src + (o * view.n + first[order[j]]) * row_bytes,
                  row_bytes);
    }
  }
  if (!want_index && !want_inverse && !want_counts) {
    *rv = values;
    return;
  }
  ffi::Array<ffi::Tensor> result{values};
  if (want_index) {
    std::vector<int64_t> index(order.size());
    for (size_t j = 0; j < order.size(); ++j) index[j] = first[order[j]];
    result.push_back(Int64Vector(index, {k}));
  }
  if (want_inverse) {
    std::vector<int64_t> shape =
        axis < 0 ? std::vector<int64_t>(host.shape().begin(), host.shape().end())
                 : std::vector<int64_t>{view.n};
    result.push_back(Int64Vector(inverse, shape));
  }
  if (want_counts) {
    std::vector<int64_t> ordered(order.size());
    for (size_t j = 0; j < order.size(); ++j) ordered[j] = counts[order[j]];
    result.push_back(Int64Vector(ordered, {k}));
  }
  *rv = result;
}

ffi::Tensor Nonzero(ffi::Tensor x) {
  ffi::Tensor host = HostInput(x, "relax.run.nonzero");
  DLDataType t = host.dtype();
  size_t bytes = ElementBytes(t);
  const char* base = Data<const char>(host);
  std::vector<int64_t> dims(host.shape().begin(), host.shape().end());
  if (dims.empty()) dims = {1};  // numpy.atleast_1d
  int64_t ndim = static_cast<int64_t>(dims.size());
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < host.numel(); ++i) {
    if (!Read(base + i * bytes, t).IsZero()) hits.push_back(i);
  }
  int64_t count = static_cast<int64_t>(hits.size());
  ffi::Tensor out = NewHostTensor({ndim, count}, kInt64);
  int64_t* coords = Data<int64_t>(out);
  for (int64_t h = 0; h < count; ++h) {
    int64_t flat = hits[h];
    for (int64_t d = ndim - 1; d >= 0; --d) {
      coords[d * count + h] = flat % dims[d];
      flat /= dims[d];
    }
  }
  return out;
}

ffi::Tensor ShapeToTensor(ffi::Shape shape) {
  int64_t n = static_cast<int64_t>(shape.size());
  ffi::Tensor out = NewHostTensor({n}, n == 0 ? kFloat64 : kInt64);
  for (int64_t i = 0; i < n; ++i) Data<int64_t>(out)[i] = shape[i];
  return out;
}

}  // namespace

void RegisterRelaxRunBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def_packed("relax.run.unique", Unique)
      .def("relax.run.nonzero", Nonzero)
      .def("relax.run.shape_to_tensor", ShapeToTensor);
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
