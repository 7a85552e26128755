/*
 * vm.builtin.paged_attention_kv_cache_create: the argument list that apache-tvm 0.27's
 * TIRPagedKVCache emits (tvm/relax/frontend/nn/llm/kv_cache.py), turned into a cache config and
 * the model's kernels, with a clear error for the features this cache does not provide.
 *
 *   0 Shape(max_batch_size, max_total_seq_len, prefill_chunk_size, page_size,
 *           support_sliding_window[, layer_sliding_window_size])
 *   1 Shape layer indptr (pipeline stages)   2-5 num_qo_heads, num_kv_heads, qk/v head dims
 *   6 Shape attention kind per layer          7 enable_disaggregation   8 rope mode
 *   9 rope scale   10 rope theta   11 rope extension factors (tensor, or anything else: none)
 *   12 a 0-d tensor giving the cache's dtype and device
 *   13/14 transpose-append kernels (MHA / MLA)
 *   15-22 attention kernels, each () or ("tirx", kernel): ragged prefill, paged prefill, paged
 *         decode, the two sliding-window variants, tree attention (paged, ragged), MLA prefill
 *   23 merge kernels   24 split+rotary   25 copy single page   26 debug get kv   27 compact copy
 *   28 (optional, unused)
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <string>
#include <utility>

#include "paged_kv_cache.h"

namespace tvm_runtime {
namespace core {
namespace lm {

namespace {

constexpr const char* kWho = "vm.builtin.paged_attention_kv_cache_create";

[[noreturn]] void Fail(const char* kind, const std::string& message) {
  backend::ThrowError(kind, std::string(kWho) + ": " + message);
}

template <typename T>
T Arg(const ffi::PackedArgs& args, int i, const char* what) {
  auto v = args[i].try_cast<T>();
  if (!v.has_value()) {
    Fail("TypeError", std::string("argument ") + std::to_string(i) + " (" + what +
                          ") has the wrong type: " + args[i].GetTypeKey());
  }
  return *v;
}

/* () -> undefined; ("tirx", kernel) -> kernel; other backends are refused by name. */
ffi::Function AttentionKernel(const ffi::PackedArgs& args, int i, const char* what) {
  auto tuple = Arg<ffi::Array<ffi::Any>>(args, i, what);
  if (tuple.empty()) return ffi::Function();
  auto backend = tuple[0].try_cast<ffi::String>();
  if (backend.has_value() && *backend == "tirx" && tuple.size() == 2) {
    auto f = tuple[1].try_cast<ffi::Function>();
    if (f.has_value()) return *f;
  }
  if (backend.has_value() && *backend == "flashinfer") {
    Fail("NotImplementedError",
         "the model was compiled with FlashInfer attention kernels (FlashInferPagedKVCache), "
         "which tvm-runtime does not ship; compile it with TIRPagedKVCache instead");
  }
  Fail("TypeError", std::string("argument ") + std::to_string(i) + " (" + what +
                        ") must be () or (\"tirx\", kernel)");
}

ffi::Function OptionalKernel(const ffi::PackedArgs& args, int i) {
  auto f = args[i].try_cast<ffi::Function>();
  return f.has_value() ? *f : ffi::Function();
}

bool Flag(const ffi::PackedArgs& args, int i, const char* what) {
  if (auto b = args[i].try_cast<bool>()) return *b;
  return Arg<int64_t>(args, i, what) != 0;
}

}  // namespace

PagedKVCache CreatePagedKVCache(ffi::PackedArgs args) {
  if (args.size() != 28 && args.size() != 29) {
    Fail("TypeError", "expected the 28 arguments apache-tvm 0.27's TIRPagedKVCache passes, got " +
                          std::to_string(args.size()) +
                          " (was the model compiled by another apache-tvm version?)");
  }
  ffi::Shape config = Arg<ffi::Shape>(args, 0, "cache config");
  if (config.size() != 5 && config.size() != 6) {
    Fail("ValueError",
         "the cache config must have 5 or 6 entries, got " + std::to_string(config.size()));
  }
  ffi::Shape layer_indptr = Arg<ffi::Shape>(args, 1, "layer partition");
  if (layer_indptr.size() < 2) Fail("ValueError", "the layer partition needs at least 2 entries");

  PagedKVCacheConfig cfg;
  cfg.max_batch_size = config[0];
  int64_t max_total_seq_len = config[1];
  cfg.prefill_chunk_size = config[2];
  cfg.page_size = config[3];
  cfg.support_sliding_window = config[4] != 0;
  cfg.layer_begin = layer_indptr[0];
  cfg.num_layers = layer_indptr[1] - layer_indptr[0];
  cfg.num_qo_heads = Arg<int64_t>(args, 2, "num_qo_heads");
  cfg.num_kv_heads = Arg<int64_t>(args, 3, "num_kv_heads");
  cfg.qk_head_dim = Arg<int64_t>(args, 4, "qk_head_dim");
  cfg.v_head_dim = Arg<int64_t>(args, 5, "v_head_dim");
  for (int64_t kind : Arg<ffi::Shape>(args, 6, "attention kinds")) {
    cfg.attn_kinds.push_back(static_cast<AttnKind>(kind));
  }
  bool disaggregation = Flag(args, 7, "enable_disaggregation");
  cfg.rope_mode = static_cast<RopeMode>(Arg<int64_t>(args, 8, "rope mode"));
  cfg.rotary_scale = Arg<double>(args, 9, "rope scale");
  cfg.rotary_theta = Arg<double>(args, 10, "rope theta");
  if (auto factors = args[11].try_cast<ffi::Tensor>()) cfg.rope_ext_factors = *factors;
  ffi::Tensor init = Arg<ffi::Tensor>(args, 12, "dtype/device tensor");
  cfg.dtype = init.dtype();
  cfg.device = init.device();

  if (cfg.max_batch_size <= 0 || max_total_seq_len <= 0 || cfg.prefill_chunk_size <= 0 ||
      cfg.page_size <= 0) {
    Fail("ValueError",
         "max_batch_size, max_total_seq_len, prefill_chunk_size and page_size "
         "must be positive");
  }
  if (cfg.num_layers <= 0 || cfg.num_qo_heads <= 0 || cfg.num_kv_heads <= 0 ||
      cfg.num_qo_heads % cfg.num_kv_heads != 0 || cfg.qk_head_dim <= 0 || cfg.v_head_dim <= 0) {
    Fail("ValueError", "invalid layer/head configuration");
  }
  if (static_cast<int64_t>(cfg.attn_kinds.size()) < layer_indptr[1]) {
    Fail("ValueError", "the attention kinds list is shorter than the number of layers");
  }
  for (AttnKind kind : cfg.attn_kinds) {
    if (kind == AttnKind::kMLA) {
      Fail("NotImplementedError",
           "multi-head latent attention (MLA) caches are not supported by tvm-runtime yet");
    }
    if (kind == AttnKind::kMHASliding) {
      Fail("NotImplementedError",
           "per-layer sliding-window attention (mha_sliding) is not supported by tvm-runtime yet");
    }
    if (kind != AttnKind::kMHA) Fail("ValueError", "unknown attention kind");
  }
  if (disaggregation) {
    Fail("NotImplementedError",
         "KV transfer between engines (enable_disaggregation) is not supported by tvm-runtime");
  }
  if (cfg.support_sliding_window && cfg.rope_mode != RopeMode::kNone) {
    // Keys are cached without rotation and rotated by the attention kernels at their position in
    // the window (what apache-tvm does), so that sliding never leaves stale rotations behind.
    cfg.rope_mode = RopeMode::kInline;
  }
  cfg.num_pages = (max_total_seq_len + cfg.page_size - 1) / cfg.page_size + 1;
  if (cfg.support_sliding_window) cfg.num_pages += 2 * cfg.max_batch_size;

  PagedKVCacheKernels k;
  k.transpose_append = OptionalKernel(args, 13);
  k.prefill_ragged = AttentionKernel(args, 15, "ragged prefill");
  k.prefill = AttentionKernel(args, 16, "paged prefill");
  k.decode = AttentionKernel(args, 17, "paged decode");
  k.prefill_sliding_window = AttentionKernel(args, 18, "sliding-window prefill");
  k.decode_sliding_window = AttentionKernel(args, 19, "sliding-window decode");
  for (const ffi::Any& f : Arg<ffi::Array<ffi::Any>>(args, 23, "merge kernels")) {
    auto fn = f.try_cast<ffi::Function>();
    if (!fn.has_value()) Fail("TypeError", "merge kernels must be functions");
    k.merge.push_back(*fn);
  }
  k.split_rotary = Arg<ffi::Function>(args, 24, "split rotary kernel");
  k.copy_single_page = Arg<ffi::Function>(args, 25, "copy page kernel");
  k.debug_get_kv = Arg<ffi::Function>(args, 26, "debug get kv kernel");
  bool sliding = cfg.support_sliding_window;
  if (!k.transpose_append.defined() || !k.prefill_ragged.defined() || k.merge.empty() ||
      !(sliding ? k.prefill_sliding_window : k.prefill).defined() ||
      !(sliding ? k.decode_sliding_window : k.decode).defined()) {
    Fail("ValueError", "the model did not pass the MHA attention kernels this cache needs");
  }
  return PagedKVCache(ffi::make_object<PagedKVCacheObj>(std::move(cfg), std::move(k)));
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
