/*
 * The vm.builtin.kv_state_* and vm.builtin.attention_kv_cache_* globals of apache-tvm 0.27
 * (names and argument orders as the compiled models and mlc-llm-style engines call them).  Every
 * name 0.27 registers exists here, so a model never meets a missing builtin: the features this
 * runtime does not provide (KV transfer between engines, checkpointing pages, MLA, token trees)
 * raise NotImplementedError saying so.
 */
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/error.h>

#include <string>

#include "lm_init.h"
#include "paged_kv_cache.h"

namespace tvm_runtime {
namespace core {
namespace lm {

namespace {

void Unsupported(const std::string& name, const std::string& what) {
  namespace refl = ::tvm::ffi::reflection;
  std::string full = "vm.builtin." + name;  // the registry copies the name
  refl::GlobalDef().def_packed(full.c_str(), [name, what](ffi::PackedArgs, ffi::Any*) {
    backend::ThrowError("NotImplementedError",
                        "vm.builtin." + name + ": " + what + " is not supported by tvm-runtime");
  });
}

void BeginForward(ffi::PackedArgs args, ffi::Any*) {
  if (args.size() != 3 && args.size() != 4) {
    backend::ThrowError("TypeError",
                        "vm.builtin.kv_state_begin_forward(state, seq_ids, append_lengths"
                        "[, token_tree_parents]) takes 3 or 4 arguments, got " +
                            std::to_string(args.size()));
  }
  KVState state = args[0].cast<KVState>();
  ffi::Optional<ffi::Shape> tree;
  if (args.size() == 4) tree = args[3].cast<ffi::Optional<ffi::Shape>>();
  state->BeginForward(args[1].cast<ffi::Shape>(), args[2].cast<ffi::Shape>(), tree);
}

}  // namespace

void RegisterKVCacheBuiltins() {
  PagedKVCacheObj::_GetOrAllocRuntimeTypeIndex();
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def_packed("vm.builtin.paged_attention_kv_cache_create",
                  [](ffi::PackedArgs args, ffi::Any* rv) { *rv = CreatePagedKVCache(args); })
      // KV state (the paged cache and the RNN state)
      .def("vm.builtin.kv_state_clear", [](KVState s) { s->Clear(); })
      .def("vm.builtin.kv_state_add_sequence", [](KVState s, int64_t id) { s->AddSequence(id); })
      .def("vm.builtin.kv_state_remove_sequence",
           [](KVState s, int64_t id) { s->RemoveSequence(id); })
      .def("vm.builtin.kv_state_fork_sequence",
           [](KVState s, int64_t parent, int64_t child, int64_t fork_pos) {
             s->ForkSequence(parent, child, fork_pos);
           })
      .def("vm.builtin.kv_state_popn", [](KVState s, int64_t id, int64_t n) { s->PopN(id, n); })
      .def_packed("vm.builtin.kv_state_begin_forward", BeginForward)
      .def("vm.builtin.kv_state_end_forward", [](KVState s) { s->EndForward(); })
      // Queries
      .def("vm.builtin.attention_kv_cache_empty", [](PagedKVCache c) { return c->Empty(); })
      .def("vm.builtin.attention_kv_cache_get_num_available_pages",
           [](PagedKVCache c) { return c->NumAvailablePages(); })
      .def("vm.builtin.attention_kv_cache_get_total_sequence_length",
           [](PagedKVCache c) { return c->TotalSequenceLength(); })
      .def("vm.builtin.attention_kv_cache_get_sequence_length",
           [](PagedKVCache c, int64_t id) { return c->SequenceLength(id); })
      .def("vm.builtin.attention_kv_cache_get_query_positions",
           [](PagedKVCache c) { return c->QueryPositions(); })
      .def("vm.builtin.attention_kv_cache_debug_get_kv",
           [](PagedKVCache c, int64_t id, int64_t start, int64_t end, ffi::Tensor k,
              ffi::Tensor v) { c->DebugGetKV(id, start, end, k, v); })
      // Attention, called by the compiled model once per layer
      .def("vm.builtin.attention_kv_cache_attention_with_fused_qkv",
           [](PagedKVCache c, int64_t layer, double sm_scale, ffi::Tensor qkv, ffi::Tensor o) {
             c->AttentionWithFusedQKV(layer, sm_scale, qkv, o);
           })
      .def("vm.builtin.attention_kv_cache_self_attention",
           [](PagedKVCache c, int64_t layer, double sm_scale, ffi::Tensor q, ffi::Tensor k,
              ffi::Tensor v, ffi::Tensor o,
              ffi::Tensor lse) { c->SelfAttention(layer, sm_scale, q, k, v, o, lse); })
      .def("vm.builtin.attention_kv_cache_cross_attention",
           [](PagedKVCache c, int64_t layer, double sm_scale, ffi::Tensor q, ffi::Tensor o,
              ffi::Tensor lse) { c->CrossAttention(layer, sm_scale, q, o, lse); })
      .def("vm.builtin.attention_kv_cache_attention_with_shared_kv",
           [](PagedKVCache c, int64_t layer, double sm_scale, ffi::Tensor q, ffi::Tensor k,
              ffi::Tensor v,
              ffi::Tensor o) { c->AttentionWithSharedKV(layer, sm_scale, q, k, v, o); })
      .def("vm.builtin.attention_kv_cache_merge_attn_output_inplace",
           [](PagedKVCache c, ffi::Tensor o_self, ffi::Tensor lse_self, ffi::Tensor o_cross,
              ffi::Tensor lse_cross) {
             return c->MergeAttnOutput(o_self, lse_self, o_cross, lse_cross);
           })
      .def("vm.builtin.attention_kv_cache_enable_sliding_window_for_seq",
           [](PagedKVCache c, int64_t id, int64_t window, int64_t sinks) {
             c->EnableSlidingWindow(id, window, sinks);
           })
      .def("vm.builtin.attention_kv_cache_commit_accepted_token_tree_nodes",
           [](PagedKVCache, ffi::Shape, ffi::Shape) {
             // Forwards here only ever hold chains, whose tokens are committed as they are
             // appended; there is nothing left to commit.
           });
  Unsupported("attention_kv_cache_append_mla_kv", "multi-head latent attention (MLA)");
  Unsupported("attention_kv_cache_debug_get_kv_mla", "multi-head latent attention (MLA)");
  Unsupported("kv_cache_disagg_prepare_recv", "KV transfer between engines (disaggregation)");
  Unsupported("kv_cache_disagg_mark_send", "KV transfer between engines (disaggregation)");
  for (const char* name : {"export_page_group", "import_page_group", "prepare_import",
                           "finish_import", "get_checkpoint_metadata", "get_layout_hash"}) {
    Unsupported(std::string("attention_kv_cache_") + name,
                "exporting and importing KV cache pages (checkpoints)");
  }
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
