/*
 * The pieces sort, argsort, argsort_nms and topk share: checking the key tensor, ordering every
 * row along an axis (in parallel over rows), and writing indices in the output's dtype.
 */
#ifndef TVM_RUNTIME_EXTRA_SORT_ROWS_H_
#define TVM_RUNTIME_EXTRA_SORT_ROWS_H_

#include <tvm_runtime/backend/error.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "error_text.h"
#include "ordered_keys.h"
#include "parallel_rows.h"
#include "row_sorter.h"
#include "tensor_checks.h"

namespace tvm_runtime {
namespace extra {

// Scratch a thread keeps between calls (two buffers of this size at most).
constexpr size_t kKeepScratchBytes = size_t{64} << 20;

inline KeyKind RequireSortableKeys(const DLTensor* t, const char* func) {
  KeyKind kind;
  if (!KeyKindOf(t->dtype, &kind)) {
    backend::ThrowError("ValueError",
                        ErrorText(func, ": cannot sort elements of dtype ", DTypeName(t->dtype),
                                  "; supported: int8/16/32/64, uint8/16/32/64, float16/32/64, "
                                  "bfloat16"));
  }
  return kind;
}

inline void RequireIndexableLength(int64_t length, const char* func) {
  if (length > static_cast<int64_t>(std::numeric_limits<uint32_t>::max())) {
    backend::ThrowError(
        "ValueError",
        ErrorText(func, ": cannot sort rows longer than 2^32-1 elements (got ", length, ")"));
  }
}

/* Calls f(T{}) with the C type of an index output: int32, int64, float32 or float64 (0.27's set).
 */
template <typename F>
inline void DispatchIndexType(DLDataType t, const char* func, const char* what, F&& f) {
  if (t.lanes == 1 && t.code == kDLInt && t.bits == 32) {
    f(int32_t{});
  } else if (t.lanes == 1 && t.code == kDLInt && t.bits == 64) {
    f(int64_t{});
  } else if (t.lanes == 1 && t.code == kDLFloat && t.bits == 32) {
    f(float{});
  } else if (t.lanes == 1 && t.code == kDLFloat && t.bits == 64) {
    f(double{});
  } else {
    backend::ThrowError("ValueError",
                        ErrorText(func, ": ", what, " has dtype ", DTypeName(t),
                                  "; indices must be int32, int64, float32 or float64"));
  }
}

template <typename K>
inline void CopyElement(char* dst_base, int64_t dst, const char* src_base, int64_t src) {
  std::memcpy(dst_base + dst * static_cast<int64_t>(sizeof(K)),
              src_base + src * static_cast<int64_t>(sizeof(K)), sizeof(K));
}

/*
 * Orders the first `count(row)` elements of every row of `input` along the split `s` and calls
 * emit(row_start, sorted, count) with the row's flat start offset (in `input`) and the order.
 * With `keep < count`, only the first `keep` entries of the order are computed (top-k).
 */
template <typename K, typename Count, typename Emit>
void OrderRows(const DLTensor* input, const AxisSplit& s, KeyKind kind, bool descending,
               int64_t keep, Count&& count, Emit&& emit) {
  const char* base = DataOf(input);
  ParallelRows(s.rows(), s.length, [&](int64_t begin, int64_t end) {
    // Reused across calls: a fresh multi-megabyte buffer per call costs more in page faults
    // than the sort itself.  Released again after calls that needed very large ones.
    static thread_local RowSorter<K> sorter;
    struct Trim {
      ~Trim() { sorter.ReleaseIfLarger(kKeepScratchBytes); }
    } trim;
    for (int64_t row = begin; row < end; ++row) {
      int64_t start = s.RowStart(row, s.length);
      int64_t n = count(row);
      sorter.Load(base, start, s.inner, n, kind, descending);
      const KeyIndex<K>* sorted = keep < n ? sorter.SelectFirst(keep) : sorter.SortAll();
      emit(row, sorted, n);
    }
  });
}

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_SORT_ROWS_H_
