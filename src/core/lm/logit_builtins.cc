/*
 * In-place logit processing builtins of apache-tvm 0.27 (the penalties and temperature softmax an
 * LLM's sampler applies before drawing a token), same names, signatures and float arithmetic:
 *   vm.builtin.apply_repetition_penalty(Tensor logits, Tensor token_ids int32, f64 penalty)
 *       logit <= 0: logit * penalty, else logit / penalty, once per listed id
 *   vm.builtin.apply_presence_and_frequency_penalty(Tensor logits, Tensor token_ids int32,
 *       Tensor token_freqs int32, f64 presence, f64 frequency)
 *       logit -= freq * frequency + presence, once per listed id
 *   vm.builtin.apply_softmax_with_temperature(Tensor logits, f64 temperature)
 *       softmax(logit / temperature) over the last axis, written back into logits
 * All tensors are compact CPU tensors, logits float32 (0.27 requires the CPU too). Token ids are
 * checked against the vocabulary (0.27 writes out of bounds instead).
 */
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/error.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>

#include "../ffi_names.h"
#include "host_tensor_args.h"
#include "lm_init.h"

namespace tvm_runtime {
namespace core {
namespace lm {
namespace {

/* Host pointer to the float32 logits row that `who` edits in place. */
float* LogitsRow(const ffi::Tensor& logits, const char* who) {
  lm_args::RequireCompact(logits, lm_args::kFloat32, who, "logits");
  lm_args::RequireHost(logits, who, "logits");
  lm_args::RequireSingleRow(logits, who, "logits");
  return lm_args::HostData<float>(logits);
}

const int32_t* TokenIds(const ffi::Tensor& ids, int64_t vocab, const char* who) {
  lm_args::RequireCompact(ids, lm_args::kInt32, who, "token_ids");
  lm_args::RequireHost(ids, who, "token_ids");
  const int32_t* data = lm_args::HostData<const int32_t>(ids);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (data[i] < 0 || data[i] >= vocab) {
      backend::ThrowError("ValueError", std::string(who) + ": token id " + std::to_string(data[i]) +
                                            " (at " + std::to_string(i) +
                                            ") is outside the vocabulary of " +
                                            std::to_string(vocab) + " logits");
    }
  }
  return data;
}

void ApplyRepetitionPenalty(ffi::Tensor logits, ffi::Tensor token_ids, double penalty) {
  const char* who = "vm.builtin.apply_repetition_penalty";
  float* x = LogitsRow(logits, who);
  const int32_t* ids = TokenIds(token_ids, lm_args::LastDim(logits), who);
  for (int64_t i = 0; i < token_ids.numel(); ++i) {
    float& v = x[ids[i]];
    // Pushes the logit towards "less likely" whatever its sign.
    v = static_cast<float>(v <= 0 ? v * penalty : v / penalty);
  }
}

void ApplyPresenceAndFrequencyPenalty(ffi::Tensor logits, ffi::Tensor token_ids,
                                      ffi::Tensor token_freqs, double presence_penalty,
                                      double frequency_penalty) {
  const char* who = "vm.builtin.apply_presence_and_frequency_penalty";
  float* x = LogitsRow(logits, who);
  const int32_t* ids = TokenIds(token_ids, lm_args::LastDim(logits), who);
  lm_args::RequireCompact(token_freqs, lm_args::kInt32, who, "token_freqs");
  lm_args::RequireHost(token_freqs, who, "token_freqs");
  if (token_freqs.numel() != token_ids.numel()) {
    backend::ThrowError("ValueError", std::string(who) + ": token_freqs has " +
                                          std::to_string(token_freqs.numel()) +
                                          " entries, token_ids " +
                                          std::to_string(token_ids.numel()) + " (one per id)");
  }
  const int32_t* freqs = lm_args::HostData<const int32_t>(token_freqs);
  for (int64_t i = 0; i < token_ids.numel(); ++i) {
    float& v = x[ids[i]];
    v = static_cast<float>(v - (freqs[i] * frequency_penalty + presence_penalty));
  }
}

void ApplySoftmaxWithTemperature(ffi::Tensor logits, double temperature) {
  const char* who = "vm.builtin.apply_softmax_with_temperature";
  float* x = LogitsRow(logits, who);
  if (!(temperature > 0)) {
    backend::ThrowError("ValueError", std::string(who) + ": temperature must be > 0, got " +
                                          std::to_string(temperature) +
                                          " (use argmax for greedy decoding)");
  }
  int64_t vocab = lm_args::LastDim(logits);
  float inv_temp = static_cast<float>(1.0 / temperature);
  // One pass with a running maximum and a rescaled running sum (as 0.27 does, starting from
  // FLT_MIN, so the results agree to the last bit), then normalise.
  float max_seen = FLT_MIN;
  double denom = 0.0;
  for (int64_t i = 0; i < vocab; ++i) {
    float v = x[i] * inv_temp;
    float prev = max_seen;
    max_seen = v > max_seen ? v : max_seen;
    denom = denom * std::exp(prev - max_seen) + std::exp(v - max_seen);
  }
  for (int64_t i = 0; i < vocab; ++i) {
    float v = x[i] * inv_temp;
    x[i] = static_cast<float>(std::exp(v - max_seen) / denom);
  }
}

}  // namespace

void RegisterLogitBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("vm.builtin.apply_repetition_penalty", ApplyRepetitionPenalty)
      .def("vm.builtin.apply_presence_and_frequency_penalty", ApplyPresenceAndFrequencyPenalty)
      .def("vm.builtin.apply_softmax_with_temperature", ApplySoftmaxWithTemperature);
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
