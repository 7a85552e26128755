/*
 * The element-wise reductions of the cpu collective library: sum, prod, min, max and avg (the
 * ReduceKind numbering of apache-tvm 0.27: 0..4) over every dtype a collective may carry.
 * float16 and bfloat16 are reduced in float32 and rounded once (to nearest even), on every
 * transport, so a result does not depend on how the workers are connected; avg of integers is
 * the sum divided by the count, rounded toward zero (what NCCL's ncclAvg does).
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_REDUCE_H_
#define TVM_RUNTIME_EXTRA_DISCO_REDUCE_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>

namespace tvm_runtime {
namespace extra {
namespace disco {

enum class ReduceKind : int { kSum = 0, kProd = 1, kMin = 2, kMax = 3, kAvg = 4 };

/* "sum", "prod", ... for messages. */
const char* ReduceKindName(ReduceKind kind);

/* Throws a ValueError naming `func` unless `dtype` can be reduced (scalar int/uint 8-64 bits,
 * float16/32/64, bfloat16). */
void CheckReducible(DLDataType dtype, const char* func);

/* out[i] = reduce(ins[0][i], ..., ins[n-1][i]) for i < count; out may alias ins[0].  kAvg
 * divides by n. */
void ReduceMany(void* out, const void* const* ins, int n, int64_t count, DLDataType dtype,
                ReduceKind kind);

/* acc[i] = reduce(acc[i], in[i]): one step of a pairwise (ring) reduction; kAvg sums here and
 * FinishAverage divides at the end. */
void ReduceInto(void* acc, const void* in, int64_t count, DLDataType dtype, ReduceKind kind);

/* data[i] /= n, for kAvg after ReduceInto steps. */
void FinishAverage(void* data, int64_t count, DLDataType dtype, int n);

/* Whether `dtype` is float16 or bfloat16, which pairwise reductions carry in float32. */
bool IsHalfFloat(DLDataType dtype);

/* float16/bfloat16 <-> float32 (rounding to nearest even). */
void WidenToFloat(const void* in, float* out, int64_t count, DLDataType dtype);
void NarrowFromFloat(const float* in, void* out, int64_t count, DLDataType dtype);

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_REDUCE_H_
