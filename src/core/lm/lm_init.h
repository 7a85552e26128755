/* Registration steps of the language-model support (src/core/lm), run by
 * RegisterLanguageModelState (lm_register.cc) from TVMRuntimeInitialize. */
#ifndef TVM_RUNTIME_CORE_LM_LM_INIT_H_
#define TVM_RUNTIME_CORE_LM_LM_INIT_H_

namespace tvm_runtime {
namespace core {
namespace lm {

void RegisterKVCacheBuiltins();        // paged KV cache, kv_state_* (kv_cache_builtins.cc)
void RegisterRNNStateBuiltins();       // rnn_state_* (rnn_state.cc)
void RegisterLegacyKVCacheBuiltins();  // non-paged attention_kv_cache_* (legacy_kv_cache.cc)
void RegisterSamplingBuiltins();       // token sampling (sampling_builtins.cc)
void RegisterLogitBuiltins();          // penalties, temperature softmax (logit_builtins.cc)
void RegisterTensorCacheBuiltins();    // tensor (weight) cache (tensor_cache.cc)
void RegisterParamCacheBuiltins();     // parameter arrays/modules from it (param_from_cache.cc)

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_LM_INIT_H_
