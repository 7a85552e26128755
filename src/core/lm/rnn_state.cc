/*
 * The RNN state of apache-tvm 0.27 (vm.builtin.rnn_state_*): the per-sequence recurrent state of
 * state-space / RWKV-style models, with a short history so that the last tokens can be popped.
 *
 * Storage per (layer, state): a device tensor (max_seqs, max_history, *state_shape).  A sequence
 * owns one slot; its current state lives in history entry `history`, and a forward step writes
 * the next entry (the model's setter kernel does that), then EndForward advances `history`.  The
 * model's getter/setter kernels receive the slot and history index of each sequence of the batch.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "device_tensors.h"
#include "kv_state.h"
#include "lm_init.h"

namespace tvm_runtime {
namespace core {
namespace lm {

namespace {

class RNNStateObj : public KVStateObj {
 public:
  RNNStateObj(int64_t num_layers, int64_t max_seqs, int64_t max_history,
              ffi::Array<ffi::Function> f_gets, ffi::Array<ffi::Function> f_sets,
              ffi::Array<ffi::Tensor> init)
      : num_layers_(num_layers),
        max_seqs_(max_seqs),
        max_history_(max_history),
        f_gets_(std::move(f_gets)),
        f_sets_(std::move(f_sets)),
        init_(std::move(init)) {
    DLDevice device = init_[0].device();
    for (int64_t l = 0; l < num_layers_; ++l) {
      std::vector<ffi::Tensor> layer;
      for (const ffi::Tensor& value : init_) {
        std::vector<int64_t> shape = {max_seqs_, max_history_};
        shape.insert(shape.end(), value.shape().begin(), value.shape().end());
        layer.push_back(AllocTensor(ffi::Shape(shape), value.dtype(), device));
      }
      storage_.push_back(std::move(layer));
    }
    Clear();
  }

  void Clear() final {
    seqs_.clear();
    free_slots_.clear();
    for (int64_t s = max_seqs_ - 1; s >= 0; --s) free_slots_.push_back(s);
    in_forward_ = false;
  }

  void AddSequence(int64_t seq_id) final {
    if (seqs_.count(seq_id)) {
      backend::ThrowError("ValueError", "kv_state_add_sequence: sequence " +
                                            std::to_string(seq_id) +
                                            " already exists in the RNN state");
    }
    Sequence seq;
    seq.slot = TakeSlot("kv_state_add_sequence");
    for (int64_t l = 0; l < num_layers_; ++l) {
      for (size_t s = 0; s < init_.size(); ++s) {
        DLTensor dst = Entry(l, s, seq.slot, 0);
        CopyTensor(init_[s].GetDLTensorPtr(), &dst, CopyWait::kQueued);
      }
    }
    seqs_.emplace(seq_id, seq);
  }

  void RemoveSequence(int64_t seq_id) final {
    Sequence& seq = Find(seq_id, "kv_state_remove_sequence");
    free_slots_.push_back(seq.slot);
    seqs_.erase(seq_id);
  }

  void ForkSequence(int64_t parent, int64_t child, int64_t fork_pos) final {
    const char* who = "kv_state_fork_sequence";
    Sequence src = Find(parent, who);
    if (seqs_.count(child)) {
      backend::ThrowError("ValueError", std::string(who) + ": the child sequence " +
                                            std::to_string(child) +
                                            " already exists in the RNN state");
    }
    if (fork_pos != -1 && fork_pos != src.length) {
      // A recurrent state summarises the whole prefix: only a fork at the end exists.
      backend::ThrowError("ValueError", std::string(who) +
                                            ": an RNN state can only be forked at the end of the "
                                            "parent (fork_pos -1 or " +
                                            std::to_string(src.length) + "), got " +
                                            std::to_string(fork_pos));
    }
    Sequence forked = src;
    forked.slot = TakeSlot(who);
    for (int64_t l = 0; l < num_layers_; ++l) {
      for (size_t s = 0; s < init_.size(); ++s) {
        DLTensor from = Slot(l, s, src.slot), to = Slot(l, s, forked.slot);
        CopyTensor(&from, &to, CopyWait::kQueued);
      }
    }
    seqs_.emplace(child, forked);
  }

  void PopN(int64_t seq_id, int64_t n) final {
    Sequence& seq = Find(seq_id, "kv_state_popn");
    if (n < 0 || n > seq.available_history) {
      backend::ThrowError("ValueError", "kv_state_popn: sequence " + std::to_string(seq_id) +
                                            " can roll back " +
                                            std::to_string(seq.available_history) +
                                            " tokens (max_history " + std::to_string(max_history_) +
                                            " keeps the last states of "
                                            "single-token steps), asked for " +
                                            std::to_string(n));
    }
    seq.length -= n;
    seq.available_history -= n;
    seq.history = (seq.history - n + max_history_) % max_history_;
  }

  void BeginForward(const ffi::Shape& seq_ids, const ffi::Shape& append_lengths,
                    const ffi::Optional<ffi::Shape>& token_tree_parents) final {
    const char* who = "kv_state_begin_forward";
    if (seq_ids.size() != append_lengths.size() || seq_ids.size() == 0) {
      backend::ThrowError("ValueError", std::string(who) +
                                            ": give one append length per sequence, for at least "
                                            "one sequence");
    }
    if (token_tree_parents.has_value()) {
      size_t pos = 0;
      const ffi::Shape& parents = token_tree_parents.value();
      for (int64_t n : append_lengths) {
        for (int64_t j = 0; j < n; ++j, ++pos) {
          if (pos >= parents.size() || parents[pos] != j - 1) {
            backend::ThrowError("ValueError", std::string(who) +
                                                  ": an RNN state accepts only chains as token "
                                                  "trees (each token's parent is the one before)");
          }
        }
      }
    }
    slots_.host.clear();
    history_.host.clear();
    std::unordered_set<int64_t> seen;
    for (int64_t id : seq_ids) {
      if (!seen.insert(id).second) {
        backend::ThrowError(
            "ValueError", std::string(who) + ": sequence " + std::to_string(id) + " appears twice");
      }
      const Sequence& seq = Find(id, who);
      slots_.host.push_back(static_cast<int32_t>(seq.slot));
      history_.host.push_back(static_cast<int32_t>(seq.history));
    }
    DLDevice dev = init_[0].device();
    d_slots_ = slots_.Upload(dev);
    d_history_ = history_.Upload(dev);
    cur_ids_.assign(seq_ids.begin(), seq_ids.end());
    cur_lengths_.assign(append_lengths.begin(), append_lengths.end());
    in_forward_ = true;
  }

  void EndForward() final {
    if (!in_forward_) return;
    for (size_t i = 0; i < cur_ids_.size(); ++i) {
      auto it = seqs_.find(cur_ids_[i]);
      if (it == seqs_.end()) continue;  // removed during the forward
      Sequence& seq = it->second;
      seq.length += cur_lengths_[i];
      // Only single-token steps can be rolled back: a longer step overwrote one history entry
      // with the state after all of its tokens.
      seq.available_history =
          cur_lengths_[i] > 1 ? 0 : std::min(seq.available_history + 1, max_history_ - 1);
      seq.history = (seq.history + 1) % max_history_;
    }
    in_forward_ = false;
  }

  void Get(int64_t layer, int64_t state, ffi::Tensor out) {
    CheckAccess(layer, state, "rnn_state_get");
    f_gets_[state](storage_[layer][state], d_slots_, d_history_, out);
  }

  void Set(int64_t layer, int64_t state, ffi::Tensor data) {
    CheckAccess(layer, state, "rnn_state_set");
    f_sets_[state](storage_[layer][state], d_slots_, d_history_, data);
  }

  ffi::Tensor DebugGet(int64_t layer, int64_t state, int64_t seq_id) {
    CheckIndices(layer, state, "rnn_state_debug_get");
    const Sequence& seq = Find(seq_id, "rnn_state_debug_get");
    const ffi::Tensor& value = init_[state];
    ffi::Tensor out = AllocTensor(value.shape(), value.dtype(), value.device());
    DLTensor from = Entry(layer, state, seq.slot, seq.history);
    CopyTensor(&from, out.GetDLTensorPtr(), CopyWait::kQueued);
    return out;
  }

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("relax.vm.RNNState", RNNStateObj, KVStateObj);

 private:
  struct Sequence {
    int64_t slot = 0;
    int64_t history = 0;  // history entry holding the current state
    int64_t available_history = 0;
    int64_t length = 0;
  };

  Sequence& Find(int64_t seq_id, const char* who) {
    auto it = seqs_.find(seq_id);
    if (it == seqs_.end()) {
      backend::ThrowError("ValueError", std::string(who) + ": the RNN state has no sequence " +
                                            std::to_string(seq_id) +
                                            " (add it with kv_state_add_sequence)");
    }
    return it->second;
  }

  int64_t TakeSlot(const char* who) {
    if (free_slots_.empty()) {
      backend::ThrowError("RuntimeError", std::string(who) + ": all " + std::to_string(max_seqs_) +
                                              " sequence slots of the RNN state are in use; "
                                              "remove a sequence first");
    }
    int64_t slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }

  void CheckIndices(int64_t layer, int64_t state, const char* who) const {
    if (layer < 0 || layer >= num_layers_ || state < 0 ||
        state >= static_cast<int64_t>(init_.size())) {
      backend::ThrowError("ValueError", std::string(who) + ": layer " + std::to_string(layer) +
                                            ", state " + std::to_string(state) + " out of range (" +
                                            std::to_string(num_layers_) + " layers, " +
                                            std::to_string(init_.size()) + " states each)");
    }
  }

  void CheckAccess(int64_t layer, int64_t state, const char* who) const {
    CheckIndices(layer, state, who);
    if (!in_forward_) {
      backend::ThrowError("RuntimeError", std::string(who) +
                                              ": no forward in progress; call "
                                              "vm.builtin.kv_state_begin_forward first");
    }
  }

  /* A compact view (no strides) of storage[layer][state] from element `offset` on, with the
   * trailing `skip` dimensions dropped from the front of the shape. */
  DLTensor View(int64_t layer, size_t state, int skip, int64_t index) const {
    const DLTensor* t = storage_[layer][state].GetDLTensorPtr();
    int64_t inner = 1;
    for (int i = skip; i < t->ndim; ++i) inner *= t->shape[i];
    DLTensor view = *t;
    view.byte_offset +=
        static_cast<uint64_t>(index * inner) * ((t->dtype.bits * t->dtype.lanes + 7) / 8);
    view.ndim = t->ndim - skip;
    view.shape = t->shape + skip;
    view.strides = nullptr;
    return view;
  }
  DLTensor Entry(int64_t layer, size_t state, int64_t slot, int64_t history) const {
    return View(layer, state, 2, slot * max_history_ + history);
  }
  DLTensor Slot(int64_t layer, size_t state, int64_t slot) const {
    return View(layer, state, 1, slot);
  }

  int64_t num_layers_, max_seqs_, max_history_;
  ffi::Array<ffi::Function> f_gets_, f_sets_;
  ffi::Array<ffi::Tensor> init_;
  std::vector<std::vector<ffi::Tensor>> storage_;
  std::unordered_map<int64_t, Sequence> seqs_;
  std::vector<int64_t> free_slots_;
  bool in_forward_ = false;
  std::vector<int64_t> cur_ids_, cur_lengths_;
  DeviceIntArray slots_, history_;
  ffi::Tensor d_slots_, d_history_;
};

class RNNState : public KVState {
 public:
  explicit RNNState(ffi::ObjectPtr<RNNStateObj> n)
      : KVState(ffi::ObjectPtr<KVStateObj>(std::move(n))) {}
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(RNNState, KVState, RNNStateObj);
};

RNNState CreateRNNState(int64_t num_layers, int64_t max_seqs, int64_t max_history,
                        ffi::Array<ffi::Function> f_gets, ffi::Array<ffi::Function> f_sets,
                        ffi::Array<ffi::Tensor> init) {
  const char* who = "vm.builtin.rnn_state_create";
  if (num_layers <= 0 || max_seqs <= 0 || max_history <= 0) {
    backend::ThrowError("ValueError", std::string(who) +
                                          ": num_layers, reserved_num_seqs and max_history must "
                                          "be positive");
  }
  if (init.empty() || f_gets.size() != init.size() || f_sets.size() != init.size()) {
    backend::ThrowError("ValueError", std::string(who) +
                                          ": give one getter, one setter and one initial value "
                                          "per state (got " +
                                          std::to_string(f_gets.size()) + ", " +
                                          std::to_string(f_sets.size()) + ", " +
                                          std::to_string(init.size()) + ")");
  }
  DLDevice dev = init[0].device();
  for (const ffi::Tensor& t : init) {
    if (t.device().device_type != dev.device_type || t.device().device_id != dev.device_id) {
      backend::ThrowError("ValueError",
                          std::string(who) + ": all initial values must be on one device");
    }
  }
  return RNNState(ffi::make_object<RNNStateObj>(
      num_layers, max_seqs, max_history, std::move(f_gets), std::move(f_sets), std::move(init)));
}

}  // namespace

void RegisterRNNStateBuiltins() {
  RNNStateObj::_GetOrAllocRuntimeTypeIndex();
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("vm.builtin.rnn_state_create", CreateRNNState)
      .def("vm.builtin.rnn_state_get", [](RNNState s, int64_t layer, int64_t state,
                                          ffi::Tensor out) { s->Get(layer, state, out); })
      .def("vm.builtin.rnn_state_set",
           [](RNNState s, int64_t layer, int64_t state, ffi::Tensor data) {
             s->Set(layer, state, data);
             return s;
           })
      .def("vm.builtin.rnn_state_debug_get",
           [](RNNState s, int64_t layer, int64_t state, int64_t seq_id) {
             return s->DebugGet(layer, state, seq_id);
           });
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
