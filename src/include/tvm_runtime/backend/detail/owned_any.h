/*
 * Moving values between tvm::ffi::Any and the raw TVMFFIAny slots of the C ABI (device-API
 * `out` parameters, packed return slots, raised errors) with tvm-ffi's public types only, so the
 * backends do not depend on tvm-ffi's internal helpers, which may change in any release.
 *
 * An owned TVMFFIAny slot and an ffi::Any are the same 16 bytes with the same meaning (tvm-ffi's
 * own calling convention treats a C return slot as an Any* the same way), so ownership moves with
 * Any's move constructor: no reference-count traffic on the VM's hot paths.
 */
#ifndef TVM_RUNTIME_BACKEND_DETAIL_OWNED_ANY_H_
#define TVM_RUNTIME_BACKEND_DETAIL_OWNED_ANY_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/c_api.h>

#include <new>
#include <utility>

namespace tvm_runtime {
namespace backend {

static_assert(sizeof(::tvm::ffi::Any) == sizeof(TVMFFIAny) &&
                  alignof(::tvm::ffi::Any) == alignof(TVMFFIAny),
              "tvm::ffi::Any must have the layout of TVMFFIAny");

/* Takes over the reference an owned slot holds; the slot is left None. */
inline ::tvm::ffi::Any TakeOwnedAny(TVMFFIAny* slot) {
  return ::tvm::ffi::Any(std::move(*reinterpret_cast<::tvm::ffi::Any*>(slot)));
}

/* Writes `value` into a raw slot that then owns its reference (the C ABI's `out` convention).
 * Whatever the slot held is overwritten, not released: callers pass None or uninitialised slots. */
inline void StoreOwnedAny(::tvm::ffi::Any value, TVMFFIAny* out) {
  new (out)::tvm::ffi::Any(std::move(value));
}

/* The object behind an owned handle (e.g. from TVMFFITensorCreateUnsafeView), as `T`. */
template <typename T>
T TakeOwnedObject(int32_t type_index, TVMFFIObjectHandle handle) {
  TVMFFIAny slot;
  slot.type_index = type_index;
  slot.zero_padding = 0;
  slot.v_obj = static_cast<TVMFFIObject*>(handle);
  return TakeOwnedAny(&slot).cast<T>();
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_DETAIL_OWNED_ANY_H_
