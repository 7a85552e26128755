/* RegisterLanguageModelState: everything src/core/lm adds to the global registry (KV cache, RNN
 * state, sampling, logit processing and the weight cache). */
#include "../core_init.h"
#include "kv_state.h"
#include "lm_init.h"

namespace tvm_runtime {
namespace core {

void RegisterLanguageModelState() {
  // Allocate the object type indices now rather than on first use.
  lm::KVStateObj::_GetOrAllocRuntimeTypeIndex();
  lm::RegisterKVCacheBuiltins();
  lm::RegisterRNNStateBuiltins();
  lm::RegisterLegacyKVCacheBuiltins();
  lm::RegisterSamplingBuiltins();
  lm::RegisterLogitBuiltins();
  lm::RegisterTensorCacheBuiltins();
  lm::RegisterParamCacheBuiltins();
}

}  // namespace core
}  // namespace tvm_runtime
