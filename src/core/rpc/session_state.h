/*
 * What one RPC server session hands its client: functions, modules, objects and tensors in
 * tables keyed by small synthetic handles, so a client can only name what it was given (an
 * unknown handle is an error, never an address the server dereferences).  One object shared by
 * the native packet handlers (remote_call.cc) and the Python session (tvm/rpc/_session.py),
 * which reaches it through the tvm_runtime.rpc.* globals; dropping it frees what the client left.
 */
#ifndef TVM_RUNTIME_CORE_RPC_SESSION_STATE_H_
#define TVM_RUNTIME_CORE_RPC_SESSION_STATE_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/object.h>

#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <utility>

namespace tvm_runtime {
namespace core {
namespace rpc {

class SessionStateObj : public ::tvm::ffi::Object {
 public:
  /* A new handle naming `value` (a function, module or object). */
  uint64_t Put(::tvm::ffi::Any value);
  /* What `handle` names; ValueError naming `what` when the client was never given it. */
  const ::tvm::ffi::Any& Get(uint64_t handle, const char* what) const;
  /* A new data handle naming the memory of `tensor`. */
  uint64_t PutTensor(::tvm::ffi::Tensor tensor);
  /* The tensor a data handle names; ValueError when it was freed or never issued. */
  const ::tvm::ffi::Tensor& TensorOf(uint64_t data) const;
  /* A returned tensor: an object handle and a data handle, freed together. */
  void PutReturnedTensor(::tvm::ffi::Tensor tensor, uint64_t* handle, uint64_t* data);
  void Free(uint64_t handle);
  void FreeData(uint64_t data) { buffers_.erase(data); }
  void Clear();

  // True while a client's call runs (read by the hang-up watcher thread).
  std::atomic<bool> busy{false};

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tvm_runtime.rpc.SessionState", SessionStateObj,
                                    ::tvm::ffi::Object);

 private:
  uint64_t NextHandle() { return next_ += kHandleStep; }

  static constexpr uint64_t kHandleStep = 0x10;
  uint64_t next_ = 0x1000 - kHandleStep;
  std::unordered_map<uint64_t, ::tvm::ffi::Any> objects_;
  std::unordered_map<uint64_t, ::tvm::ffi::Tensor> buffers_;
  // object handle of a returned tensor -> its data handle
  std::unordered_map<uint64_t, uint64_t> tensor_data_;
};

class SessionState : public ::tvm::ffi::ObjectRef {
 public:
  explicit SessionState(::tvm::ffi::ObjectPtr<SessionStateObj> n) : ObjectRef(std::move(n)) {}
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(SessionState, ::tvm::ffi::ObjectRef,
                                                SessionStateObj);
};

}  // namespace rpc
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_RPC_SESSION_STATE_H_
