/*
 * The paged attention KV cache of language models compiled by apache-tvm 0.27 (the object that
 * `vm.builtin.paged_attention_kv_cache_create` returns and `TIRPagedKVCache` models call).
 *
 * Design (ours, much smaller than apache-tvm's): every sequence owns a flat list of page ids;
 * forks share pages by reference count and copy a shared page only when one of its owners writes
 * into it.  Per forward, BeginForward builds the index arrays the model's TIR kernels read (page
 * table, last-page lengths, query positions, append positions) on the host and uploads them to the
 * model's device.  Attention then runs the model's own kernels:
 *   decode (one token per sequence): append k/v, then the paged decode kernel over all tokens;
 *   prefill: ragged causal attention over the new tokens, paged prefill attention over the tokens
 *   already cached, merged by the model's merge kernel, then append k/v.
 */
#ifndef TVM_RUNTIME_CORE_LM_PAGED_KV_CACHE_H_
#define TVM_RUNTIME_CORE_LM_PAGED_KV_CACHE_H_

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device_tensors.h"
#include "kv_state.h"
#include "page_pool.h"

namespace tvm_runtime {
namespace core {
namespace lm {

/* apache-tvm 0.27's enums, as the compiled model passes them. */
enum class AttnKind : int64_t { kMHA = 0, kMLA = 1, kMHASliding = 3 };
enum class RopeMode : int64_t { kNone = 0, kNormal = 1, kInline = 2 };

struct PagedKVCacheConfig {
  int64_t page_size = 16;
  int64_t num_layers = 0;   // layers held by this cache
  int64_t layer_begin = 0;  // global id of its first layer
  int64_t num_qo_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t qk_head_dim = 0;
  int64_t v_head_dim = 0;
  std::vector<AttnKind> attn_kinds;  // indexed by global layer id
  int64_t max_batch_size = 0;
  int64_t num_pages = 0;
  int64_t prefill_chunk_size = 0;
  bool support_sliding_window = false;
  RopeMode rope_mode = RopeMode::kNone;
  double rotary_scale = 1.0;
  double rotary_theta = 10000.0;
  ffi::Optional<ffi::Tensor> rope_ext_factors;
  DLDataType dtype{kDLFloat, 32, 1};
  DLDevice device{kDLCPU, 0};
};

/* The model's compiled TIR kernels (absent ones stay undefined). */
struct PagedKVCacheKernels {
  ffi::Function transpose_append;
  ffi::Function prefill_ragged;
  ffi::Function prefill;
  ffi::Function decode;
  ffi::Function prefill_sliding_window;
  ffi::Function decode_sliding_window;
  std::vector<ffi::Function> merge;  // [0]: MHA; [1] (MLA models): the fine-grained merge
  ffi::Function split_rotary;
  ffi::Function copy_single_page;
  ffi::Function debug_get_kv;
};

class PagedKVCacheObj : public KVStateObj {
 public:
  PagedKVCacheObj(PagedKVCacheConfig config, PagedKVCacheKernels kernels);

  // KVStateObj
  void Clear() final;
  void AddSequence(int64_t seq_id) final;
  void RemoveSequence(int64_t seq_id) final;
  void ForkSequence(int64_t parent, int64_t child, int64_t fork_pos) final;
  void PopN(int64_t seq_id, int64_t n) final;
  void BeginForward(const ffi::Shape& seq_ids, const ffi::Shape& append_lengths,
                    const ffi::Optional<ffi::Shape>& token_tree_parents) final;
  void EndForward() final;

  // Queries
  bool Empty() const;
  int64_t NumAvailablePages() const { return pool_.num_free(); }
  int64_t TotalSequenceLength() const;
  int64_t SequenceLength(int64_t seq_id) const;
  ffi::Tensor QueryPositions() const;

  // Attention (what the compiled model calls, per layer)
  void AttentionWithFusedQKV(int64_t layer_id, double sm_scale, ffi::Tensor qkv, ffi::Tensor o);
  void SelfAttention(int64_t layer_id, double sm_scale, ffi::Tensor q, ffi::Tensor k, ffi::Tensor v,
                     ffi::Tensor o, ffi::Tensor lse);
  void CrossAttention(int64_t layer_id, double sm_scale, ffi::Tensor q, ffi::Tensor o,
                      ffi::Tensor lse);
  void AttentionWithSharedKV(int64_t source_layer_id, double sm_scale, ffi::Tensor q, ffi::Tensor k,
                             ffi::Tensor v, ffi::Tensor o);
  ffi::Array<ffi::Tensor> MergeAttnOutput(ffi::Tensor o_self, ffi::Tensor lse_self,
                                          ffi::Tensor o_cross, ffi::Tensor lse_cross);

  void EnableSlidingWindow(int64_t seq_id, int64_t window, int64_t sinks);

  /* k/v of tokens [start, end) of a sequence, every layer: (num_layers, end - start, heads, d). */
  void DebugGetKV(int64_t seq_id, int64_t start, int64_t end, ffi::Tensor k, ffi::Tensor v);

  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("relax.vm.PagedAttentionKVCache", PagedKVCacheObj, KVStateObj);

 private:
  struct Sequence {
    std::vector<int32_t> pages;  // PagesOf(*this, length) of them
    int64_t length = 0;
    // Sliding window (EnableSlidingWindowForSeq): once `length` exceeds `window`, the oldest
    // tokens after the first `sink` ones are dropped.  Token p lives at in-sequence slot p when
    // p < sink, else at p - sink + offset (the slots in between were slid out).
    int64_t window = -1;
    int64_t sink_request = 0;  // attention sinks asked for, fixed at the first slide
    int64_t sink = 0;
    int64_t offset = 0;
  };

  Sequence& Find(int64_t seq_id, const char* who);
  int64_t PagesFor(int64_t slots) const { return (slots + cfg_.page_size - 1) / cfg_.page_size; }
  /* Pages a sequence holding `length` tokens occupies. */
  int64_t PagesOf(const Sequence& seq, int64_t length) const {
    return PagesFor(length - seq.sink + seq.offset);
  }
  /* Position in the page pool (page * page_size + slot) of token `pos` of a sequence. */
  int32_t PoolPosition(const Sequence& seq, int64_t pos) const {
    int64_t slot = pos < seq.sink ? pos : pos - seq.sink + seq.offset;
    return static_cast<int32_t>(seq.pages[slot / cfg_.page_size] * cfg_.page_size +
                                slot % cfg_.page_size);
  }
  void Slide(Sequence& seq);
  int64_t LocalLayer(int64_t layer_id, const char* who) const;
  void RequireForward(const char* who) const;
  void ReleasePagesBeyond(Sequence& seq, int64_t length);
  /* Free pages a forward needs: new pages plus copies of shared pages written into. */
  int64_t PagesNeeded(const std::vector<Sequence*>& seqs, const ffi::Shape& append_lengths) const;
  void Grow(Sequence& seq, int64_t n);
  void CopyPage(int32_t src, int32_t dst, int64_t num_tokens);
  void BuildPageTable(const std::vector<Sequence*>& seqs);
  void Append(int64_t local_layer, const ffi::Tensor& k, const ffi::Tensor& v);
  /* Attention of q over the cached tokens of the page table; false if there are none. */
  bool PagedAttention(int64_t local_layer, const ffi::Tensor& q, const ffi::Tensor& o,
                      const ffi::Tensor& lse, double sm_scale);
  void RaggedAttention(const ffi::Tensor& q, const ffi::Tensor& k, const ffi::Tensor& v,
                       const ffi::Tensor& o, const ffi::Tensor& lse, double sm_scale);
  /* Self attention over the new tokens merged with attention over the cached ones. */
  void PrefillAttention(int64_t local_layer, const ffi::Tensor& q, const ffi::Tensor& k,
                        const ffi::Tensor& v, const ffi::Tensor& o, double sm_scale);
  void CheckRows(const ffi::Tensor& t, int64_t heads, int64_t dim, const char* who,
                 const char* what) const;
  int64_t RotaryMode() const { return cfg_.rope_mode == RopeMode::kInline ? 1 : 0; }

  PagedKVCacheConfig cfg_;
  PagedKVCacheKernels kern_;
  PagePool pool_;
  std::vector<ffi::Tensor> pages_;  // per local layer: (num_pages, 2, kv_heads, page_size, d)
  std::unordered_map<int64_t, Sequence> seqs_;

  // Scratch of one forward, sized for the largest batch (rows = max(prefill chunk, batch)).
  int64_t max_rows_ = 0;
  ffi::Tensor q_buf_, k_buf_, v_buf_, o_tmp_buf_, lse_tmp_buf_, lse_buf_;

  // The current forward.
  bool in_forward_ = false;
  bool is_decode_ = false;
  bool append_before_attn_ = false;
  bool has_cached_kv_ = false;  // whether the page table of this forward holds any token
  std::vector<int64_t> cur_ids_;
  std::vector<int64_t> cur_lengths_;
  int64_t cur_total_ = 0;
  DeviceIntArray qo_indptr_, page_indptr_, page_indices_, length_info_, k_rope_pos_offset_,
      q_rope_position_, append_position_, k_ragged_rope_offset_;
  ffi::Tensor d_qo_indptr_, d_page_indptr_, d_page_indices_, d_length_info_, d_k_rope_pos_offset_,
      d_q_rope_position_, d_append_position_, d_k_ragged_rope_offset_;
  // Views of the scratch buffers with cur_total_ rows.
  ffi::Tensor q_cur_, k_cur_, v_cur_, o_tmp_cur_, lse_tmp_cur_, lse_cur_;
};

class PagedKVCache : public KVState {
 public:
  explicit PagedKVCache(ffi::ObjectPtr<PagedKVCacheObj> n)
      : KVState(ffi::ObjectPtr<KVStateObj>(std::move(n))) {}
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(PagedKVCache, KVState, PagedKVCacheObj);
};

/* vm.builtin.paged_attention_kv_cache_create(...) with apache-tvm 0.27's 28 or 29 arguments. */
PagedKVCache CreatePagedKVCache(ffi::PackedArgs args);

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_PAGED_KV_CACHE_H_
