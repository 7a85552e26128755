/*
 * Token sampling builtins of apache-tvm 0.27 (what an LLM's generation loop calls between two
 * forward passes), with 0.27's names, signatures and float32 arithmetic, so the same uniform
 * draws pick the same tokens on both runtimes:
 *   vm.builtin.sample_top_p_from_logits(Tensor logits, f64 temperature, f64 top_p, f64 uniform)
 *       -> int token; temperature < 1e-6 is greedy (argmax)
 *   vm.builtin.sample_top_p_from_prob(Tensor prob, f64 top_p, f64 uniform) -> int token
 *   vm.builtin.multinomial_from_uniform(Tensor prob[B, V], Tensor uniform[B, ...])
 *       -> Tensor int64[B, 1] on the CPU: per row, the first token whose running sum exceeds u
 * Inputs are float32, compact, with a single row (except multinomial); tensors on a device are
 * copied to the host first.
 */
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../ffi_names.h"
#include "../tensor_ops.h"
#include "host_tensor_args.h"
#include "lm_init.h"

namespace tvm_runtime {
namespace core {
namespace lm {
namespace {

using Candidate = std::pair<float, int64_t>;  // (value, token id)

// Largest value first; equal values keep token order, so ties resolve the same way every run.
void SortDescending(std::vector<Candidate>* items) {
  std::stable_sort(items->begin(), items->end(),
                   [](const Candidate& a, const Candidate& b) { return a.first > b.first; });
}

/* Nucleus pick over candidates sorted by probability (or unnormalised weight divided by `total`):
 * the nucleus is the shortest prefix whose mass reaches `top_p`, renormalised by its own mass.
 * Each candidate's value is replaced by the running sum of the prefix, as 0.27 does; returns the
 * first candidate whose normalised running sum exceeds `uniform`, or -1 when none does. */
int64_t PickFromNucleus(std::vector<Candidate>* items, double top_p, double uniform, float total,
                        bool stop_at_nucleus) {
  float running = 0.0f;
  float nucleus_mass = 0.0f;
  for (Candidate& c : *items) {
    float p = c.first / total;
    if (running < top_p) {
      nucleus_mass += p;
    } else if (stop_at_nucleus) {
      break;
    }
    running += p;
    c.first = running;
  }
  for (const Candidate& c : *items) {
    if (uniform < c.first / nucleus_mass) return c.second;
  }
  return -1;
}

int64_t SampleTopPFromLogits(ffi::Tensor logits, double temperature, double top_p, double uniform) {
  const char* who = "vm.builtin.sample_top_p_from_logits";
  lm_args::FloatRow row = lm_args::ReadFloatRow(logits, who, "logits");
  const float* x = row.values;
  int64_t vocab = row.size;

  std::vector<Candidate> items(vocab);
  for (int64_t i = 0; i < vocab; ++i) items[i] = {x[i], i};
  SortDescending(&items);
  if (temperature < 1e-6f) return items[0].second;

  // Softmax in sorted order (largest first), in float32 like 0.27.
  float scale = static_cast<float>(1.0 / temperature);
  float top = items[0].first;
  float total = 0.0f;
  for (Candidate& c : items) {
    c.first = std::exp((c.first - top) * scale);
    total += c.first;
  }
  int64_t token = PickFromNucleus(&items, top_p, uniform, total, /*stop_at_nucleus=*/false);
  if (token < 0) {  // only when uniform >= 1 (0.27 fails a check there too)
    backend::ThrowError("ValueError", std::string(who) + ": uniform_sample " +
                                          std::to_string(uniform) +
                                          " is outside [0, 1); pass a uniform random number");
  }
  return token;
}

int64_t SampleTopPFromProb(ffi::Tensor prob, double top_p, double uniform) {
  const char* who = "vm.builtin.sample_top_p_from_prob";
  lm_args::FloatRow row = lm_args::ReadFloatRow(prob, who, "prob");
  const float* p = row.values;
  int64_t vocab = row.size;

  std::vector<Candidate> items;
  // Samples among the tokens whose probability is at least `cutoff`; -1 when that set is empty,
  // or (for a non-zero cutoff) holds less than top_p of the mass, so a lower cutoff is needed.
  auto sample_above = [&](float cutoff) -> int64_t {
    items.clear();
    for (int64_t i = 0; i < vocab; ++i) {
      if (p[i] >= cutoff) items.emplace_back(p[i], i);
    }
    if (items.empty()) return -1;
    SortDescending(&items);
    // 0.27's shortcut: the most likely token when uniform < p_max / top_p.
    if (uniform < items[0].first / top_p) return items[0].second;
    float mass = 0.0f;
    for (const Candidate& c : items) {
      if (mass >= top_p) break;
      mass += c.first;
    }
    if (mass < top_p && cutoff != 0.0f) return -1;
    int64_t token = PickFromNucleus(&items, top_p, uniform, 1.0f, /*stop_at_nucleus=*/true);
    return token >= 0 ? token : items.back().second;
  };

  // A token with probability below top_p / 1024 can only matter when fewer than 1024 tokens
  // share the nucleus, so filter first (usually leaves a handful) and fall back to all tokens.
  if (top_p < 1) {
    int64_t token = sample_above(static_cast<float>(top_p / 1024));
    if (token >= 0) return token;
  }
  int64_t token = sample_above(0.0f);
  if (token >= 0) return token;
  bool all_nan = std::all_of(p, p + vocab, [](float v) { return std::isnan(v); });
  backend::ThrowError(
      "ValueError",
      std::string(who) +
          (all_nan ? ": the probabilities are all NaN" : ": no token has a probability >= 0") +
          ", nothing to sample from (check the model's logits and softmax)");
}

ffi::Tensor MultinomialFromUniform(ffi::Tensor prob, ffi::Tensor uniform) {
  const char* who = "vm.builtin.multinomial_from_uniform";
  lm_args::RequireCompact(prob, lm_args::kFloat32, who, "prob");
  lm_args::RequireCompact(uniform, lm_args::kFloat32, who, "uniform_sample");
  if (prob.ndim() < 1) backend::ThrowError("ValueError", std::string(who) + ": prob is a scalar");
  int64_t batch = prob.ndim() == 1 ? 1 : prob.shape()[0];
  int64_t vocab = lm_args::LastDim(prob);
  if (vocab < 1) backend::ThrowError("ValueError", std::string(who) + ": prob has no tokens");
  if (prob.numel() != batch * vocab) {
    backend::ThrowError("ValueError", std::string(who) + ": prob must be [batch, vocab]");
  }
  if (uniform.numel() < batch) {
    backend::ThrowError(
        "ValueError", std::string(who) + ": uniform_sample has " + std::to_string(uniform.numel()) +
                          " values, need one per row of prob (" + std::to_string(batch) + ")");
  }
  ffi::Tensor host_prob = lm_args::OnHost(prob);
  ffi::Tensor host_uniform = lm_args::OnHost(uniform);
  const float* p = lm_args::HostData<const float>(host_prob);
  const float* u = lm_args::HostData<const float>(host_uniform);

  DLDevice cpu{kDLCPU, 0};
  int64_t out_shape[2] = {batch, 1};
  ffi::Tensor out = AllocTensor(ffi::ShapeView(out_shape, 2), lm_args::kInt64, cpu);
  int64_t* tokens = lm_args::HostData<int64_t>(out);
  for (int64_t row = 0; row < batch; ++row) {
    const float* pr = p + row * vocab;
    float running = 0.0f;
    int64_t token = vocab - 1;  // the last token when rounding leaves the sum below u
    for (int64_t j = 0; j < vocab; ++j) {
      running += pr[j];
      if (running > u[row]) {
        token = j;
        break;
      }
    }
    tokens[row] = token;
  }
  return out;
}

}  // namespace

void RegisterSamplingBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("vm.builtin.sample_top_p_from_logits", SampleTopPFromLogits)
      .def("vm.builtin.sample_top_p_from_prob", SampleTopPFromProb)
      .def("vm.builtin.multinomial_from_uniform", MultinomialFromUniform);
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
