/* cache_flush_cpu_non_first_arg: apache-tvm 0.27's time-evaluator preprocessor (f_preproc). */
#ifndef TVM_RUNTIME_CORE_CACHE_FLUSH_H_
#define TVM_RUNTIME_CORE_CACHE_FLUSH_H_

namespace tvm_runtime {
namespace core {

/* Registers `cache_flush_cpu_non_first_arg(args...)`: evicts the memory of every CPU tensor
 * among its arguments but the first (a kernel's inputs, by TVM's convention the first is not
 * one) from the CPU caches, so a timed round starts cold, as under apache-tvm 0.27. */
void RegisterCacheFlush();

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_CACHE_FLUSH_H_
