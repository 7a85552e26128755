/*
 * Sort keys as unsigned integers whose integer order is the numeric order of the elements.
 *
 * Every supported element type (signed/unsigned integers, IEEE floats of 16/32/64 bits and
 * bfloat16) maps to an unsigned key of the same width, so one radix sort and one comparison
 * serve them all, and a descending sort is an ascending sort of the complemented keys.  Ties are
 * broken by the element's index, which reproduces apache-tvm 0.27's stable order in both
 * directions (equal elements keep their original order).
 */
#ifndef TVM_RUNTIME_EXTRA_ORDERED_KEYS_H_
#define TVM_RUNTIME_EXTRA_ORDERED_KEYS_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tvm_runtime {
namespace extra {

enum class KeyKind { kUnsigned, kSigned, kFloat };

/* Whether `t` is an element type we can order, and how. */
inline bool KeyKindOf(DLDataType t, KeyKind* kind) {
  if (t.lanes != 1) return false;
  bool width_ok = t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  if (t.code == kDLUInt && width_ok) {
    *kind = KeyKind::kUnsigned;
  } else if (t.code == kDLInt && width_ok) {
    *kind = KeyKind::kSigned;
  } else if (t.code == kDLFloat && t.bits >= 16 && width_ok) {
    *kind = KeyKind::kFloat;
  } else if (t.code == kDLBfloat && t.bits == 16) {
    *kind = KeyKind::kFloat;
  } else {
    return false;
  }
  return true;
}

template <typename K>
inline K OrderedKey(K bits, KeyKind kind) {
  static_assert(std::is_unsigned<K>::value, "keys are unsigned");
  constexpr K kSign = static_cast<K>(K{1} << (sizeof(K) * 8 - 1));
  switch (kind) {
    case KeyKind::kUnsigned:
      return bits;
    case KeyKind::kSigned:
      return static_cast<K>(bits ^ kSign);
    case KeyKind::kFloat:
      // -0.0 == +0.0 under `<`: give both the same key so their order is decided by index.
      if (bits == kSign) bits = 0;
      return (bits & kSign) ? static_cast<K>(~bits) : static_cast<K>(bits | kSign);
  }
  return bits;
}

/*
 * The element bits an ordered key came from.  Exact for every key except the one -0.0 and +0.0
 * share (IsSharedZeroKey): callers take those elements from the input instead.
 */
template <typename K>
inline K BitsOfOrderedKey(K key, KeyKind kind) {
  constexpr K kSign = static_cast<K>(K{1} << (sizeof(K) * 8 - 1));
  switch (kind) {
    case KeyKind::kUnsigned:
      return key;
    case KeyKind::kSigned:
      return static_cast<K>(key ^ kSign);
    case KeyKind::kFloat:
      return (key & kSign) ? static_cast<K>(key ^ kSign) : static_cast<K>(~key);
  }
  return key;
}

template <typename K>
inline bool IsSharedZeroKey(K key, KeyKind kind) {
  return kind == KeyKind::kFloat && key == OrderedKey(K{0}, kind);
}

/* Unsigned integer type of `Bytes` bytes. */
template <int Bytes>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> {
  using type = uint8_t;
};
template <>
struct UnsignedOfSize<2> {
  using type = uint16_t;
};
template <>
struct UnsignedOfSize<4> {
  using type = uint32_t;
};
template <>
struct UnsignedOfSize<8> {
  using type = uint64_t;
};

/* Calls f(K{}) with the unsigned type as wide as one element of `t` (bits 8/16/32/64). */
template <typename F>
inline void DispatchKeyWidth(DLDataType t, F&& f) {
  switch (t.bits) {
    case 8:
      f(uint8_t{});
      break;
    case 16:
      f(uint16_t{});
      break;
    case 32:
      f(uint32_t{});
      break;
    default:
      f(uint64_t{});
      break;
  }
}

template <typename K>
inline K LoadBits(const char* base, int64_t element) {
  K bits;
  std::memcpy(&bits, base + element * static_cast<int64_t>(sizeof(K)), sizeof(K));
  return bits;
}

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_ORDERED_KEYS_H_
