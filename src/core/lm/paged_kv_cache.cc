/* The paged attention KV cache: sequences, pages, per-forward index arrays and attention (see
 * paged_kv_cache.h for the design). */
#include "paged_kv_cache.h"

#include <tvm/ffi/dtype.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_set>
#include <utility>

namespace tvm_runtime {
namespace core {
namespace lm {

namespace {

std::string ShapeText(const ffi::Tensor& t) {
  std::string s = "(";
  for (int i = 0; i < t.ndim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + (t.ndim() == 1 ? ",)" : ")");
}

ffi::Shape Dims(std::initializer_list<int64_t> dims) { return ffi::Shape(dims); }

}  // namespace

PagedKVCacheObj::PagedKVCacheObj(PagedKVCacheConfig config, PagedKVCacheKernels kernels)
    : cfg_(std::move(config)),
      kern_(std::move(kernels)),
      pool_(static_cast<int32_t>(cfg_.num_pages)) {
  for (int64_t l = 0; l < cfg_.num_layers; ++l) {
    pages_.push_back(
        AllocTensor(Dims({cfg_.num_pages, 2, cfg_.num_kv_heads, cfg_.page_size, cfg_.qk_head_dim}),
                    cfg_.dtype, cfg_.device));
  }
  max_rows_ = std::max(cfg_.prefill_chunk_size, cfg_.max_batch_size);
  const DLDataType f32{kDLFloat, 32, 1};
  q_buf_ =
      AllocTensor(Dims({max_rows_, cfg_.num_qo_heads, cfg_.qk_head_dim}), cfg_.dtype, cfg_.device);
  k_buf_ =
      AllocTensor(Dims({max_rows_, cfg_.num_kv_heads, cfg_.qk_head_dim}), cfg_.dtype, cfg_.device);
  v_buf_ =
      AllocTensor(Dims({max_rows_, cfg_.num_kv_heads, cfg_.v_head_dim}), cfg_.dtype, cfg_.device);
  o_tmp_buf_ =
      AllocTensor(Dims({max_rows_, cfg_.num_qo_heads, cfg_.v_head_dim}), cfg_.dtype, cfg_.device);
  lse_tmp_buf_ = AllocTensor(Dims({max_rows_, cfg_.num_qo_heads}), f32, cfg_.device);
  lse_buf_ = AllocTensor(Dims({max_rows_, cfg_.num_qo_heads}), f32, cfg_.device);
}

/************** Sequences **************/

PagedKVCacheObj::Sequence& PagedKVCacheObj::Find(int64_t seq_id, const char* who) {
  auto it = seqs_.find(seq_id);
  if (it == seqs_.end()) {
    backend::ThrowError("ValueError", std::string(who) + ": the KV cache has no sequence " +
                                          std::to_string(seq_id) +
                                          " (add it with kv_state_add_sequence)");
  }
  return it->second;
}

void PagedKVCacheObj::Clear() {
  seqs_.clear();
  pool_.Reset();
  in_forward_ = false;
}

void PagedKVCacheObj::AddSequence(int64_t seq_id) {
  if (seqs_.count(seq_id)) {
    backend::ThrowError("ValueError", "kv_state_add_sequence: sequence " + std::to_string(seq_id) +
                                          " already exists in the KV cache");
  }
  seqs_.emplace(seq_id, Sequence());
}

void PagedKVCacheObj::RemoveSequence(int64_t seq_id) {
  Sequence& seq = Find(seq_id, "kv_state_remove_sequence");
  ReleasePagesBeyond(seq, 0);
  seqs_.erase(seq_id);
}

void PagedKVCacheObj::ForkSequence(int64_t parent, int64_t child, int64_t fork_pos) {
  Sequence& src = Find(parent, "kv_state_fork_sequence");
  if (seqs_.count(child)) {
    backend::ThrowError("ValueError", "kv_state_fork_sequence: the child sequence " +
                                          std::to_string(child) +
                                          " already exists in the KV cache");
  }
  if (src.window != -1) {
    backend::ThrowError("NotImplementedError",
                        "kv_state_fork_sequence: forking a sequence with a sliding window is not "
                        "supported by tvm-runtime's KV cache");
  }
  if (fork_pos == -1) fork_pos = src.length;
  if (fork_pos < 0 || fork_pos > src.length) {
    backend::ThrowError("ValueError",
                        "kv_state_fork_sequence: fork position " + std::to_string(fork_pos) +
                            " is outside sequence " + std::to_string(parent) + " (length " +
                            std::to_string(src.length) + "); use -1 to fork at its end");
  }
  Sequence forked;
  forked.length = fork_pos;
  forked.pages.assign(src.pages.begin(), src.pages.begin() + PagesFor(fork_pos));
  for (int32_t page : forked.pages) pool_.Retain(page);
  seqs_.emplace(child, std::move(forked));
}

void PagedKVCacheObj::PopN(int64_t seq_id, int64_t n) {
  Sequence& seq = Find(seq_id, "kv_state_popn");
  if (n < 0 || n > seq.length) {
    backend::ThrowError("ValueError", "kv_state_popn: cannot pop " + std::to_string(n) +
                                          " tokens from sequence " + std::to_string(seq_id) +
                                          " of length " + std::to_string(seq.length));
  }
  if (seq.offset != 0) {
    backend::ThrowError("NotImplementedError",
                        "kv_state_popn: sequence " + std::to_string(seq_id) +
                            " has slid its window; popping tokens from it is not supported");
  }
  seq.length -= n;
  ReleasePagesBeyond(seq, seq.length);
}

void PagedKVCacheObj::EnableSlidingWindow(int64_t seq_id, int64_t window, int64_t sinks) {
  const char* who = "attention_kv_cache_enable_sliding_window_for_seq";
  if (!cfg_.support_sliding_window) {
    backend::ThrowError("ValueError", std::string(who) +
                                          ": the cache was created without sliding-window "
                                          "support (create it with support_sliding_window=1)");
  }
  Sequence& seq = Find(seq_id, who);
  if (window <= 0 || sinks < 0 || sinks >= window) {
    backend::ThrowError("ValueError", std::string(who) + ": need 0 <= attention sinks (" +
                                          std::to_string(sinks) + ") < window size (" +
                                          std::to_string(window) + ")");
  }
  if (seq.window != -1) {
    backend::ThrowError("ValueError", std::string(who) + ": sequence " + std::to_string(seq_id) +
                                          " already has a sliding window");
  }
  for (int32_t page : seq.pages) {
    if (pool_.shared(page)) {
      backend::ThrowError("NotImplementedError",
                          std::string(who) + ": sequence " + std::to_string(seq_id) +
                              " shares pages with a fork; a sliding window on it is not supported");
    }
  }
  seq.window = window;
  seq.sink_request = sinks;
}

void PagedKVCacheObj::Slide(Sequence& seq) {
  if (seq.window == -1 || seq.length <= seq.window) return;
  int64_t drop = seq.length - seq.window;
  if (seq.sink == 0 && seq.sink_request > 0) {
    // First slide: the first `sink_request` tokens stay for good.
    seq.sink = seq.offset = seq.sink_request;
  }
  int64_t sink_pages = PagesFor(seq.sink);
  int64_t first = seq.offset + drop;  // slot of the oldest token kept after the sinks
  int64_t first_page = first / cfg_.page_size;
  // Pages between the sink pages and the one holding `first` hold only dropped tokens.
  int64_t release = std::max<int64_t>(first_page - sink_pages, 0);
  for (int64_t i = 0; i < release; ++i) pool_.Release(seq.pages[sink_pages + i]);
  seq.pages.erase(seq.pages.begin() + sink_pages, seq.pages.begin() + sink_pages + release);
  seq.offset = (first_page - release) * cfg_.page_size + first % cfg_.page_size;
  seq.length = seq.window;
}

void PagedKVCacheObj::ReleasePagesBeyond(Sequence& seq, int64_t length) {
  size_t keep = static_cast<size_t>(PagesOf(seq, length));
  for (size_t i = keep; i < seq.pages.size(); ++i) pool_.Release(seq.pages[i]);
  seq.pages.resize(std::min(keep, seq.pages.size()));
}

int64_t PagedKVCacheObj::PagesNeeded(const std::vector<Sequence*>& seqs,
                                     const ffi::Shape& append_lengths) const {
  int64_t pages = 0;
  std::unordered_map<int32_t, int64_t> writers;  // shared last page -> sequences writing into it
  for (size_t i = 0; i < seqs.size(); ++i) {
    const Sequence& seq = *seqs[i];
    pages += PagesOf(seq, seq.length + append_lengths[i]) - static_cast<int64_t>(seq.pages.size());
    if (seq.length % cfg_.page_size != 0 && pool_.shared(seq.pages.back())) {
      ++writers[seq.pages.back()];
    }
  }
  // Every writer of a shared page copies it, except the last owner left, who writes in place.
  for (const auto& kv : writers) pages += std::min(kv.second, pool_.refs(kv.first) - 1);
  return pages;
}

void PagedKVCacheObj::Grow(Sequence& seq, int64_t n) {
  int64_t filled = seq.length % cfg_.page_size;
  if (filled != 0 && pool_.shared(seq.pages.back())) {
    // The next token goes into a page another sequence still reads: write into a private copy.
    int32_t copy = pool_.Allocate();
    CopyPage(seq.pages.back(), copy, filled);
    pool_.Release(seq.pages.back());
    seq.pages.back() = copy;
  }
  while (static_cast<int64_t>(seq.pages.size()) < PagesOf(seq, seq.length + n)) {
    seq.pages.push_back(pool_.Allocate());
  }
  seq.length += n;
  Slide(seq);
}

void PagedKVCacheObj::CopyPage(int32_t src, int32_t dst, int64_t num_tokens) {
  for (const ffi::Tensor& pages : pages_) {
    kern_.copy_single_page(pages, static_cast<int64_t>(src), static_cast<int64_t>(dst), num_tokens);
  }
}

/************** Queries **************/

bool PagedKVCacheObj::Empty() const { return seqs_.empty() && pool_.num_free() == cfg_.num_pages; }

int64_t PagedKVCacheObj::TotalSequenceLength() const {
  int64_t total = 0;
  for (const auto& kv : seqs_) total += kv.second.length;
  return total;
}

int64_t PagedKVCacheObj::SequenceLength(int64_t seq_id) const {
  auto it = seqs_.find(seq_id);
  if (it == seqs_.end()) {
    backend::ThrowError("ValueError",
                        "attention_kv_cache_get_sequence_length: the KV cache has no "
                        "sequence " +
                            std::to_string(seq_id));
  }
  return it->second.length;
}

ffi::Tensor PagedKVCacheObj::QueryPositions() const {
  RequireForward("attention_kv_cache_get_query_positions");
  return d_q_rope_position_;
}

/************** Forward **************/

void PagedKVCacheObj::RequireForward(const char* who) const {
  if (!in_forward_) {
    backend::ThrowError("RuntimeError", std::string(who) +
                                            ": no forward in progress; call "
                                            "vm.builtin.kv_state_begin_forward(cache, seq_ids, "
                                            "append_lengths) before running the model");
  }
}

void PagedKVCacheObj::BeginForward(const ffi::Shape& seq_ids, const ffi::Shape& append_lengths,
                                   const ffi::Optional<ffi::Shape>& token_tree_parents) {
  const char* who = "kv_state_begin_forward";
  if (seq_ids.size() != append_lengths.size()) {
    backend::ThrowError("ValueError", std::string(who) + ": " + std::to_string(seq_ids.size()) +
                                          " sequence ids but " +
                                          std::to_string(append_lengths.size()) +
                                          " append lengths");
  }
  int64_t batch = static_cast<int64_t>(seq_ids.size());
  if (batch == 0 || batch > cfg_.max_batch_size) {
    backend::ThrowError("ValueError", std::string(who) + ": batch of " + std::to_string(batch) +
                                          " sequences; the cache was created for 1 to " +
                                          std::to_string(cfg_.max_batch_size));
  }
  std::vector<Sequence*> seqs;
  std::unordered_set<int64_t> seen;
  int64_t total = 0;
  for (int64_t i = 0; i < batch; ++i) {
    if (!seen.insert(seq_ids[i]).second) {
      backend::ThrowError("ValueError", std::string(who) + ": sequence " +
                                            std::to_string(seq_ids[i]) +
                                            " appears twice in one batch");
    }
    if (append_lengths[i] <= 0) {
      backend::ThrowError("ValueError", std::string(who) + ": append length of sequence " +
                                            std::to_string(seq_ids[i]) + " must be positive, got " +
                                            std::to_string(append_lengths[i]));
    }
    seqs.push_back(&Find(seq_ids[i], who));
    total += append_lengths[i];
  }
  if (total > max_rows_) {
    backend::ThrowError("ValueError", std::string(who) + ": " + std::to_string(total) +
                                          " tokens in one forward; the cache was created with "
                                          "prefill_chunk_size " +
                                          std::to_string(cfg_.prefill_chunk_size) +
                                          " (split the prompt into chunks)");
  }
  if (token_tree_parents.has_value()) {
    // Only chains (each token's parent is the token before it) are supported: that is the
    // ordinary forward, so accept them and refuse real trees with a clear message.
    const ffi::Shape& parents = token_tree_parents.value();
    if (static_cast<int64_t>(parents.size()) != total) {
      backend::ThrowError("ValueError",
                          std::string(who) + ": token tree has " + std::to_string(parents.size()) +
                              " parent entries for " + std::to_string(total) + " tokens");
    }
    int64_t pos = 0;
    for (int64_t i = 0; i < batch; ++i) {
      for (int64_t j = 0; j < append_lengths[i]; ++j, ++pos) {
        if (parents[pos] != j - 1) {
          backend::ThrowError("NotImplementedError",
                              std::string(who) +
                                  ": token-tree attention (speculative decoding with branching "
                                  "drafts) is not supported by tvm-runtime's KV cache yet; "
                                  "only chains");
        }
      }
    }
  }
  int64_t pages_needed = PagesNeeded(seqs, append_lengths);
  if (pages_needed > pool_.num_free()) {
    backend::ThrowError("RuntimeError",
                        std::string(who) + ": the KV cache is full: this forward needs " +
                            std::to_string(pages_needed) + " more pages of " +
                            std::to_string(cfg_.page_size) + " tokens, " +
                            std::to_string(pool_.num_free()) +
                            " are free; remove finished sequences or create the cache with a "
                            "larger max_total_seq_len");
  }

  cur_ids_.assign(seq_ids.begin(), seq_ids.end());
  cur_lengths_.assign(append_lengths.begin(), append_lengths.end());
  cur_total_ = total;
  is_decode_ =
      std::all_of(cur_lengths_.begin(), cur_lengths_.end(), [](int64_t n) { return n == 1; });
  // Decode appends first and reads everything through the page table.  On the CPU a prefill
  // does what apache-tvm does (same results to the bit): the new tokens through the ragged
  // kernel, the cached ones through the page table, merged.  On other devices a prefill also
  // appends first and makes one causal pass over the page table: apache-tvm 0.27's GPU merge
  // kernel reads and writes the same log-sum-exp slot from several work-items without a barrier,
  // which is wrong wherever a work-group does not run in lock step (PoCL), and one kernel is
  // cheaper than three anyway.
  bool single_pass = is_decode_ || cfg_.device.device_type != kDLCPU;
  append_before_attn_ = single_pass && !cfg_.support_sliding_window;

  std::vector<int64_t> start(batch);
  for (int64_t i = 0; i < batch; ++i) start[i] = seqs[i]->length;
  if (append_before_attn_) {
    for (int64_t i = 0; i < batch; ++i) Grow(*seqs[i], cur_lengths_[i]);
    BuildPageTable(seqs);
  } else {
    BuildPageTable(seqs);
    for (int64_t i = 0; i < batch; ++i) Grow(*seqs[i], cur_lengths_[i]);
  }

  qo_indptr_.host.assign(1, 0);
  k_ragged_rope_offset_.host.clear();
  q_rope_position_.host.clear();
  append_position_.host.clear();
  for (int64_t i = 0; i < batch; ++i) {
    const Sequence& seq = *seqs[i];
    int64_t n = cur_lengths_[i];
    qo_indptr_.host.push_back(static_cast<int32_t>(qo_indptr_.host.back() + n));
    k_ragged_rope_offset_.host.push_back(static_cast<int32_t>(start[i]));
    for (int64_t j = 0; j < n; ++j) {
      q_rope_position_.host.push_back(static_cast<int32_t>(start[i] + j));
      // Where the token's k/v go, after any slide of this forward: tokens that became
      // attention sinks keep their slots; -1 (not stored) for tokens already slid out.
      int64_t pos = seq.length - n + j;
      int32_t where = -1;
      if (start[i] + j < seq.sink) {
        where = PoolPosition(seq, start[i] + j);
      } else if (pos >= seq.sink) {
        where = PoolPosition(seq, pos);
      }
      append_position_.host.push_back(where);
    }
  }
  DLDevice dev = cfg_.device;
  d_qo_indptr_ = qo_indptr_.Upload(dev);
  d_k_ragged_rope_offset_ = k_ragged_rope_offset_.Upload(dev);
  d_q_rope_position_ = q_rope_position_.Upload(dev);
  d_append_position_ = append_position_.Upload(dev);
  d_page_indptr_ = page_indptr_.Upload(dev);
  d_page_indices_ = page_indices_.Upload(dev);
  d_k_rope_pos_offset_ = k_rope_pos_offset_.Upload(dev);
  d_length_info_ = cfg_.support_sliding_window ? length_info_.Upload(dev, Dims({3, batch}))
                                               : length_info_.Upload(dev);

  q_cur_ = LeadingView(q_buf_, Dims({total, cfg_.num_qo_heads, cfg_.qk_head_dim}));
  k_cur_ = LeadingView(k_buf_, Dims({total, cfg_.num_kv_heads, cfg_.qk_head_dim}));
  v_cur_ = LeadingView(v_buf_, Dims({total, cfg_.num_kv_heads, cfg_.v_head_dim}));
  o_tmp_cur_ = LeadingView(o_tmp_buf_, Dims({total, cfg_.num_qo_heads, cfg_.v_head_dim}));
  lse_tmp_cur_ = LeadingView(lse_tmp_buf_, Dims({total, cfg_.num_qo_heads}));
  lse_cur_ = LeadingView(lse_buf_, Dims({total, cfg_.num_qo_heads}));
  in_forward_ = true;
}

void PagedKVCacheObj::BuildPageTable(const std::vector<Sequence*>& seqs) {
  size_t batch = seqs.size();
  page_indptr_.host.assign(1, 0);
  page_indices_.host.clear();
  length_info_.host.clear();
  k_rope_pos_offset_.host.assign(batch, 0);  // every sequence's pages start at position 0
  for (const Sequence* seq : seqs) {
    page_indices_.host.insert(page_indices_.host.end(), seq->pages.begin(), seq->pages.end());
    page_indptr_.host.push_back(static_cast<int32_t>(page_indices_.host.size()));
    int64_t slots = seq->length - seq->sink + seq->offset;
    int64_t last = slots == 0 ? 0 : (slots - 1) % cfg_.page_size + 1;
    length_info_.host.push_back(static_cast<int32_t>(last));
  }
  if (cfg_.support_sliding_window) {
    // Rows 1 and 2 of the (3, batch) layout: sliding-window offset and attention-sink length.
    for (const Sequence* seq : seqs) length_info_.host.push_back(static_cast<int32_t>(seq->offset));
    for (const Sequence* seq : seqs) length_info_.host.push_back(static_cast<int32_t>(seq->sink));
  }
  has_cached_kv_ = !page_indices_.host.empty();
}

void PagedKVCacheObj::EndForward() { in_forward_ = false; }

/************** Attention **************/

int64_t PagedKVCacheObj::LocalLayer(int64_t layer_id, const char* who) const {
  int64_t local = layer_id - cfg_.layer_begin;
  if (local < 0 || local >= cfg_.num_layers) {
    backend::ThrowError("ValueError", std::string(who) + ": layer " + std::to_string(layer_id) +
                                          " is not held by this KV cache (layers " +
                                          std::to_string(cfg_.layer_begin) + " to " +
                                          std::to_string(cfg_.layer_begin + cfg_.num_layers - 1) +
                                          ")");
  }
  return local;
}

void PagedKVCacheObj::CheckRows(const ffi::Tensor& t, int64_t heads, int64_t dim, const char* who,
                                const char* what) const {
  if (t.ndim() != 3 || t.size(0) != cur_total_ || t.size(1) != heads || t.size(2) != dim) {
    backend::ThrowError("ValueError", std::string(who) + ": " + what + " has shape " +
                                          ShapeText(t) + ", expected (" +
                                          std::to_string(cur_total_) + ", " +
                                          std::to_string(heads) + ", " + std::to_string(dim) +
                                          ") for the tokens declared by kv_state_begin_forward");
  }
  if (t.dtype() != cfg_.dtype) {
    backend::ThrowError("TypeError", std::string(who) + ": " + what + " is " +
                                         std::string(ffi::DLDataTypeToString(t.dtype())) +
                                         ", the cache holds " +
                                         std::string(ffi::DLDataTypeToString(cfg_.dtype)));
  }
}

void PagedKVCacheObj::Append(int64_t local_layer, const ffi::Tensor& k, const ffi::Tensor& v) {
  kern_.transpose_append(pages_[local_layer], k, v, d_append_position_);
}

bool PagedKVCacheObj::PagedAttention(int64_t local_layer, const ffi::Tensor& q,
                                     const ffi::Tensor& o, const ffi::Tensor& lse,
                                     double sm_scale) {
  if (!has_cached_kv_) return false;
  const ffi::Tensor& pages = pages_[local_layer];
  if (is_decode_) {
    const ffi::Function& f =
        cfg_.support_sliding_window ? kern_.decode_sliding_window : kern_.decode;
    f(q, pages, d_page_indptr_, d_page_indices_, d_length_info_, d_k_rope_pos_offset_,
      d_q_rope_position_, o, lse, RotaryMode(), cfg_.rotary_scale, cfg_.rotary_theta, sm_scale);
  } else {
    const ffi::Function& f =
        cfg_.support_sliding_window ? kern_.prefill_sliding_window : kern_.prefill;
    f(q, d_qo_indptr_, pages, d_page_indptr_, d_page_indices_, d_length_info_, d_k_rope_pos_offset_,
      d_q_rope_position_, o, lse,
      /*causal=*/static_cast<int64_t>(append_before_attn_), RotaryMode(), cfg_.rotary_scale,
      cfg_.rotary_theta, sm_scale);
  }
  return true;
}

void PagedKVCacheObj::RaggedAttention(const ffi::Tensor& q, const ffi::Tensor& k,
                                      const ffi::Tensor& v, const ffi::Tensor& o,
                                      const ffi::Tensor& lse, double sm_scale) {
  kern_.prefill_ragged(q, d_qo_indptr_, k, v, d_qo_indptr_, d_q_rope_position_,
                       d_k_ragged_rope_offset_, o, lse, /*causal=*/int64_t{1}, RotaryMode(),
                       cfg_.rotary_scale, cfg_.rotary_theta, sm_scale);
}

void PagedKVCacheObj::PrefillAttention(int64_t local_layer, const ffi::Tensor& q,
                                       const ffi::Tensor& k, const ffi::Tensor& v,
                                       const ffi::Tensor& o, double sm_scale) {
  RaggedAttention(q, k, v, o, lse_cur_, sm_scale);
  if (PagedAttention(local_layer, q, o_tmp_cur_, lse_tmp_cur_, sm_scale)) {
    kern_.merge[0](o, lse_cur_, o_tmp_cur_, lse_tmp_cur_);
  }
}

void PagedKVCacheObj::AttentionWithFusedQKV(int64_t layer_id, double sm_scale, ffi::Tensor qkv,
                                            ffi::Tensor o) {
  const char* who = "attention_kv_cache_attention_with_fused_qkv";
  RequireForward(who);
  int64_t local = LocalLayer(layer_id, who);
  CheckRows(qkv, cfg_.num_qo_heads + 2 * cfg_.num_kv_heads, cfg_.qk_head_dim, who, "qkv");
  CheckRows(o, cfg_.num_qo_heads, cfg_.v_head_dim, who, "output");
  if (cfg_.rope_ext_factors.has_value()) {
    kern_.split_rotary(qkv, d_q_rope_position_, q_cur_, k_cur_, v_cur_,
                       cfg_.rope_ext_factors.value());
  } else {
    kern_.split_rotary(qkv, d_q_rope_position_, q_cur_, k_cur_, v_cur_,
                       static_cast<int64_t>(cfg_.rope_mode == RopeMode::kNormal));
  }
  if (append_before_attn_) {
    Append(local, k_cur_, v_cur_);
    PagedAttention(local, q_cur_, o, lse_cur_, sm_scale);
  } else {
    PrefillAttention(local, q_cur_, k_cur_, v_cur_, o, sm_scale);
    Append(local, k_cur_, v_cur_);
  }
}

void PagedKVCacheObj::SelfAttention(int64_t layer_id, double sm_scale, ffi::Tensor q, ffi::Tensor k,
                                    ffi::Tensor v, ffi::Tensor o, ffi::Tensor lse) {
  const char* who = "attention_kv_cache_self_attention";
  RequireForward(who);
  LocalLayer(layer_id, who);
  CheckRows(q, cfg_.num_qo_heads, q.ndim() == 3 ? q.size(2) : -1, who, "q");
  RaggedAttention(q, k, v, o, lse, sm_scale);
}

void PagedKVCacheObj::CrossAttention(int64_t layer_id, double sm_scale, ffi::Tensor q,
                                     ffi::Tensor o, ffi::Tensor lse) {
  const char* who = "attention_kv_cache_cross_attention";
  RequireForward(who);
  int64_t local = LocalLayer(layer_id, who);
  CheckRows(q, cfg_.num_qo_heads, cfg_.qk_head_dim, who, "q");
  if (!PagedAttention(local, q, o, lse, sm_scale)) {
    // Nothing cached yet: an empty attention (output 0, log-sum-exp -inf), so that merging it
    // with the self attention leaves the latter unchanged.
    std::vector<uint8_t> zeros(ffi::GetDataSize(*o.GetDLTensorPtr()), 0);
    CopyFromHost(o.GetDLTensorPtr(), zeros.data(), static_cast<int64_t>(zeros.size()));
    std::vector<float> neg_inf(static_cast<size_t>(cur_total_ * cfg_.num_qo_heads),
                               -std::numeric_limits<float>::infinity());
    CopyFromHost(lse.GetDLTensorPtr(), neg_inf.data(),
                 static_cast<int64_t>(neg_inf.size() * sizeof(float)));
  }
}

void PagedKVCacheObj::AttentionWithSharedKV(int64_t source_layer_id, double sm_scale, ffi::Tensor q,
                                            ffi::Tensor k, ffi::Tensor v, ffi::Tensor o) {
  const char* who = "attention_kv_cache_attention_with_shared_kv";
  RequireForward(who);
  int64_t local = LocalLayer(source_layer_id, who);
  CheckRows(q, cfg_.num_qo_heads, cfg_.qk_head_dim, who, "q");
  CheckRows(o, cfg_.num_qo_heads, cfg_.v_head_dim, who, "output");
  if (append_before_attn_) {
    // Decode: the source layer has appended this step's k/v already.
    PagedAttention(local, q, o, lse_cur_, sm_scale);
  } else {
    PrefillAttention(local, q, k, v, o, sm_scale);
  }
}

ffi::Array<ffi::Tensor> PagedKVCacheObj::MergeAttnOutput(ffi::Tensor o_self, ffi::Tensor lse_self,
                                                         ffi::Tensor o_cross,
                                                         ffi::Tensor lse_cross) {
  const ffi::Function& merge = kern_.merge.size() > 1 ? kern_.merge[1] : kern_.merge[0];
  merge(o_self, lse_self, o_cross, lse_cross);
  return {o_self, lse_self};
}

void PagedKVCacheObj::DebugGetKV(int64_t seq_id, int64_t start, int64_t end, ffi::Tensor k,
                                 ffi::Tensor v) {
  const char* who = "attention_kv_cache_debug_get_kv";
  Sequence& seq = Find(seq_id, who);
  if (start < 0 || start >= end || end > seq.length) {
    backend::ThrowError("ValueError", std::string(who) + ": token range [" + std::to_string(start) +
                                          ", " + std::to_string(end) + ") is not inside sequence " +
                                          std::to_string(seq_id) + " of length " +
                                          std::to_string(seq.length));
  }
  for (const ffi::Tensor* t : {&k, &v}) {
    const ffi::Tensor& x = *t;
    if (x.ndim() != 4 || x.size(0) != cfg_.num_layers || x.size(1) != end - start ||
        x.size(2) != cfg_.num_kv_heads || x.size(3) != cfg_.qk_head_dim) {
      backend::ThrowError("ValueError",
                          std::string(who) + ": k/v must have shape (" +
                              std::to_string(cfg_.num_layers) + ", " + std::to_string(end - start) +
                              ", " + std::to_string(cfg_.num_kv_heads) + ", " +
                              std::to_string(cfg_.qk_head_dim) + "), got " + ShapeText(x));
    }
  }
  DeviceIntArray positions;
  for (int64_t pos = start; pos < end; ++pos) {
    positions.host.push_back(PoolPosition(seq, pos));
  }
  ffi::Tensor d_positions = positions.Upload(cfg_.device);
  for (int64_t l = 0; l < cfg_.num_layers; ++l) {
    kern_.debug_get_kv(pages_[l], d_positions, k, v, l);
  }
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
