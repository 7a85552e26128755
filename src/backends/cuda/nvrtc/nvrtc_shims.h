/*
 * Minimal in-memory stand-ins for the two CCCL headers apache-tvm 0.27's CUDA source includes
 * on its NVRTC branch (<cuda/std/cstdint> and <cuda/std/type_traits>), with exactly the names
 * that preamble imports.  Parsing the real CCCL takes ~0.8 s per compile; these take ~0, and
 * the generated code is identical because the kernels only use the typedefs and traits below.
 * A source that needs more fails to compile with them and is recompiled with the real headers.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_NVRTC_SHIMS_H_
#define TVM_RUNTIME_BACKENDS_CUDA_NVRTC_SHIMS_H_

namespace tvm_runtime {
namespace cuda {

/* Part of the compile-cache key: bump when the shim text changes. */
constexpr const char* kShimVersion = "shims-1";

constexpr const char* kShimCstdintName = "cuda/std/cstdint";
constexpr const char* kShimCstdint = R"(#pragma once
namespace cuda { namespace std {
using int8_t = signed char;
using int16_t = short;
using int32_t = int;
using int64_t = long long;
using uint8_t = unsigned char;
using uint16_t = unsigned short;
using uint32_t = unsigned int;
using uint64_t = unsigned long long;
using intptr_t = long long;
using uintptr_t = unsigned long long;
} }
)";

constexpr const char* kShimTypeTraitsName = "cuda/std/type_traits";
constexpr const char* kShimTypeTraits = R"(#pragma once
namespace cuda { namespace std {
template <class T, T v> struct integral_constant {
  static constexpr T value = v;
  using value_type = T;
  using type = integral_constant;
  constexpr operator value_type() const noexcept { return value; }
  constexpr value_type operator()() const noexcept { return value; }
};
using true_type = integral_constant<bool, true>;
using false_type = integral_constant<bool, false>;
template <class A, class B> struct is_same : false_type {};
template <class A> struct is_same<A, A> : true_type {};
template <class A, class B> inline constexpr bool is_same_v = is_same<A, B>::value;
template <class T> struct remove_cv { using type = T; };
template <class T> struct remove_cv<const T> { using type = T; };
template <class T> struct remove_cv<volatile T> { using type = T; };
template <class T> struct remove_cv<const volatile T> { using type = T; };
template <class T> struct tvm_is_int : false_type {};
template <> struct tvm_is_int<bool> : true_type {};
template <> struct tvm_is_int<char> : true_type {};
template <> struct tvm_is_int<signed char> : true_type {};
template <> struct tvm_is_int<unsigned char> : true_type {};
template <> struct tvm_is_int<wchar_t> : true_type {};
template <> struct tvm_is_int<char16_t> : true_type {};
template <> struct tvm_is_int<char32_t> : true_type {};
template <> struct tvm_is_int<short> : true_type {};
template <> struct tvm_is_int<unsigned short> : true_type {};
template <> struct tvm_is_int<int> : true_type {};
template <> struct tvm_is_int<unsigned int> : true_type {};
template <> struct tvm_is_int<long> : true_type {};
template <> struct tvm_is_int<unsigned long> : true_type {};
template <> struct tvm_is_int<long long> : true_type {};
template <> struct tvm_is_int<unsigned long long> : true_type {};
template <class T> struct is_integral : tvm_is_int<typename remove_cv<T>::type> {};
template <class T> struct tvm_is_fp : false_type {};
template <> struct tvm_is_fp<float> : true_type {};
template <> struct tvm_is_fp<double> : true_type {};
template <> struct tvm_is_fp<long double> : true_type {};
template <class T> struct is_floating_point : tvm_is_fp<typename remove_cv<T>::type> {};
template <class T> struct is_arithmetic
    : integral_constant<bool, is_integral<T>::value || is_floating_point<T>::value> {};
template <class T, bool = is_arithmetic<T>::value>
struct tvm_is_signed : integral_constant<bool, T(-1) < T(0)> {};
template <class T> struct tvm_is_signed<T, false> : false_type {};
template <class T> struct is_signed : tvm_is_signed<T> {};
template <class T, bool = is_arithmetic<T>::value>
struct tvm_is_unsigned : integral_constant<bool, T(0) < T(-1)> {};
template <class T> struct tvm_is_unsigned<T, false> : false_type {};
template <class T> struct is_unsigned : tvm_is_unsigned<T> {};
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { using type = T; };
template <bool B, class T, class F> struct conditional { using type = T; };
template <class T, class F> struct conditional<false, T, F> { using type = F; };
} }
)";

/* Pre-included when a source uses INFINITY/NAN (TVM's CUDA codegen prints them for infinite
 * and NaN constants; NVRTC has no <cmath>).  Division keeps them usable in namespace-scope
 * constants, where NVRTC rejects __int_as_float and has no __builtin_inff.
 * Also when it uses CUtensorMap: TMA kernels take one by value (`const __grid_constant__
 * CUtensorMap`), a complete type that only the host header cuda.h defines.  cuda.h's layout
 * (128 bytes, 64-byte aligned) under its struct tag, which CCCL's <cuda/barrier> also declares,
 * so the two agree. */
constexpr const char* kPreludeName = "tvm_runtime_cuda_prelude.h";
constexpr const char* kPrelude = R"(#pragma once
#ifndef INFINITY
#define INFINITY (1.0f / 0.0f)
#endif
#ifndef NAN
#define NAN (0.0f / 0.0f)
#endif
struct alignas(64) CUtensorMap_st {
  unsigned long long opaque[16];
};
typedef struct CUtensorMap_st CUtensorMap;
)";

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_NVRTC_SHIMS_H_
