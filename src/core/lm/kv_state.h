/*
 * The state objects that language models compiled by apache-tvm 0.27 carry between calls:
 * KVStateObj is what the vm.builtin.kv_state_* builtins act on (the sequences a cache holds and
 * the batch of the current forward); the paged attention KV cache and the RNN state derive from
 * it.  Type keys are apache-tvm's, so an object prints the same name on either runtime.
 */
#ifndef TVM_RUNTIME_CORE_LM_KV_STATE_H_
#define TVM_RUNTIME_CORE_LM_KV_STATE_H_

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/optional.h>

#include <cstdint>
#include <utility>

namespace tvm_runtime {
namespace core {
namespace lm {

namespace ffi = ::tvm::ffi;

class KVStateObj : public ffi::Object {
 public:
  virtual ~KVStateObj() = default;

  /* Drops every sequence; the state can be reused as if just created. */
  virtual void Clear() = 0;
  virtual void AddSequence(int64_t seq_id) = 0;
  virtual void RemoveSequence(int64_t seq_id) = 0;
  /* `child` starts as a copy of the first `fork_pos` tokens of `parent` (-1: all of them). */
  virtual void ForkSequence(int64_t parent, int64_t child, int64_t fork_pos) = 0;
  /* Removes the last `n` tokens of a sequence. */
  virtual void PopN(int64_t seq_id, int64_t n) = 0;
  /* Declares the batch of the next forward: which sequences, how many new tokens each, and
   * optionally the token tree (parent index of each new token, -1 for a root). */
  virtual void BeginForward(const ffi::Shape& seq_ids, const ffi::Shape& append_lengths,
                            const ffi::Optional<ffi::Shape>& token_tree_parents) = 0;
  virtual void EndForward() = 0;

  static constexpr bool _type_mutable = true;
  static constexpr uint32_t _type_child_slots = 2;
  TVM_FFI_DECLARE_OBJECT_INFO("relax.vm.KVState", KVStateObj, ffi::Object);
};

class KVState : public ffi::ObjectRef {
 public:
  explicit KVState(ffi::ObjectPtr<KVStateObj> n) : ffi::ObjectRef(std::move(n)) {}
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(KVState, ffi::ObjectRef, KVStateObj);
};

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_KV_STATE_H_
