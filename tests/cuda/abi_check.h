/*
 * Compile-time ABI comparison of our own declarations of a vendor C API with the vendor's header,
 * for the declaration checks (tests/cuda/check_nccl_api_decls.cc,
 * tests/rocm/check_hip_api_decls.cc).  Where we declare enums as int and handles as void*, the
 * types differ from the header's but the calls are the same: same number of parameters, each of the
 * same kind (pointer, integer or enum, floating, struct by value) and size.
 */
#ifndef TVM_RUNTIME_TESTS_CUDA_ABI_CHECK_H_
#define TVM_RUNTIME_TESTS_CUDA_ABI_CHECK_H_

#include <type_traits>

namespace tvm_runtime {
namespace abi_check {

template <typename A, typename B>
constexpr bool SameAbiType() {
  if constexpr (std::is_void_v<A> || std::is_void_v<B>) {
    return std::is_void_v<A> && std::is_void_v<B>;
  } else if constexpr (std::is_pointer_v<A> || std::is_pointer_v<B>) {
    return std::is_pointer_v<A> && std::is_pointer_v<B>;
  } else if constexpr (std::is_class_v<A> || std::is_class_v<B>) {
    return std::is_class_v<A> && std::is_class_v<B> && sizeof(A) == sizeof(B) &&
           alignof(A) == alignof(B);
  } else {
    constexpr bool int_a = std::is_integral_v<A> || std::is_enum_v<A>;
    constexpr bool int_b = std::is_integral_v<B> || std::is_enum_v<B>;
    return int_a == int_b && std::is_floating_point_v<A> == std::is_floating_point_v<B> &&
           sizeof(A) == sizeof(B);
  }
}

/* Whether two function pointer types are called alike. */
template <typename R1, typename... A, typename R2, typename... B>
constexpr bool SameAbiFunction(R1 (*)(A...), R2 (*)(B...)) {
  if constexpr (sizeof...(A) != sizeof...(B)) {
    return false;
  } else {
    return SameAbiType<R1, R2>() && (SameAbiType<A, B>() && ...);
  }
}

}  // namespace abi_check
}  // namespace tvm_runtime

#define TVM_RUNTIME_SAME_ABI(ours, theirs)                                                       \
  static_assert(::tvm_runtime::abi_check::SameAbiFunction(static_cast<ours>(nullptr), (theirs)), \
                #theirs)

#endif  // TVM_RUNTIME_TESTS_CUDA_ABI_CHECK_H_
