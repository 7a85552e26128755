/*
 * tvm.contrib.sort.sort / argsort / argsort_nms: what apache-tvm 0.27's topi emits for
 * sort/argsort on CPU targets (extern calls from the compiled host code).
 *
 * Calling conventions (fixed by 0.27's compiled code):
 *   sort(input, output, axis: int, is_ascend: bool)          output: input's dtype and shape
 *   argsort(input, output, axis: int, is_ascend: bool)       output: int32/int64/float32/float64
 *   argsort_nms(input, sort_num, output, axis, is_ascend)    only the first sort_num[row] elements
 *                                                            of each row are ordered; the rest
 *                                                            of the row's output is its position
 * Equal elements keep their original order in both directions (0.27 uses a stable sort).
 */
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>

#include <cstdint>
#include <cstring>

#include "error_text.h"
#include "extra_register.h"
#include "sort_rows.h"

namespace tvm_runtime {
namespace extra {
namespace {

constexpr const char* kSortName = "tvm.contrib.sort.sort";
constexpr const char* kArgsortName = "tvm.contrib.sort.argsort";
constexpr const char* kArgsortNmsName = "tvm.contrib.sort.argsort_nms";

void Sort(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  RequireArgCount(args, 4, kSortName, "(input, output, axis, is_ascend)");
  DLTensor* input = CpuTensorArg(args, 0, kSortName, "input");
  DLTensor* output = CpuTensorArg(args, 1, kSortName, "output");
  int axis = NormalizeAxis(args[2].cast<int64_t>(), input, kSortName);
  bool ascending = args[3].cast<bool>();
  KeyKind kind = RequireSortableKeys(input, kSortName);
  if (DTypeName(input->dtype) != DTypeName(output->dtype)) {
    backend::ThrowError("ValueError",
                        ErrorText(kSortName, ": output dtype ", DTypeName(output->dtype),
                                  " differs from input dtype ", DTypeName(input->dtype)));
  }
  AxisSplit s = SplitAtAxis(input, axis);
  RequireShapeAlongAxis(input, output, axis, s.length, kSortName, "output");
  RequireIndexableLength(s.length, kSortName);
  const char* in = DataOf(input);
  char* out = DataOf(output);
  DispatchKeyWidth(input->dtype, [&](auto key) {
    using K = decltype(key);
    OrderRows<K>(
        input, s, kind, !ascending, s.length, [&](int64_t) { return s.length; },
        [&](int64_t row, const KeyIndex<K>* sorted, int64_t n) {
          // Values come back from the keys themselves (no random reads of the input), except
          // zeros, whose sign the key does not keep.
          int64_t start = s.RowStart(row, s.length);
          K flip = ascending ? K{0} : static_cast<K>(~K{0});
          for (int64_t k = 0; k < n; ++k) {
            K key = static_cast<K>(sorted[k].key ^ flip);
            int64_t at = start + k * s.inner;
            if (IsSharedZeroKey(key, kind)) {
              CopyElement<K>(out, at, in, start + sorted[k].index * s.inner);
            } else {
              K bits = BitsOfOrderedKey(key, kind);
              std::memcpy(out + at * static_cast<int64_t>(sizeof(K)), &bits, sizeof(K));
            }
          }
        });
  });
}

void Argsort(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  RequireArgCount(args, 4, kArgsortName, "(input, output, axis, is_ascend)");
  DLTensor* input = CpuTensorArg(args, 0, kArgsortName, "input");
  DLTensor* output = CpuTensorArg(args, 1, kArgsortName, "output");
  int axis = NormalizeAxis(args[2].cast<int64_t>(), input, kArgsortName);
  bool ascending = args[3].cast<bool>();
  KeyKind kind = RequireSortableKeys(input, kArgsortName);
  AxisSplit s = SplitAtAxis(input, axis);
  RequireShapeAlongAxis(input, output, axis, s.length, kArgsortName, "output");
  RequireIndexableLength(s.length, kArgsortName);
  DispatchIndexType(output->dtype, kArgsortName, "output", [&](auto index_type) {
    using I = decltype(index_type);
    I* out = reinterpret_cast<I*>(DataOf(output));
    DispatchKeyWidth(input->dtype, [&](auto key) {
      using K = decltype(key);
      OrderRows<K>(
          input, s, kind, !ascending, s.length, [&](int64_t) { return s.length; },
          [&](int64_t row, const KeyIndex<K>* sorted, int64_t n) {
            int64_t start = s.RowStart(row, s.length);
            for (int64_t k = 0; k < n; ++k) {
              out[start + k * s.inner] = static_cast<I>(sorted[k].index);
            }
          });
    });
  });
}

void ArgsortNms(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  RequireArgCount(args, 5, kArgsortNmsName, "(input, sort_num, output, axis, is_ascend)");
  DLTensor* input = CpuTensorArg(args, 0, kArgsortNmsName, "input");
  DLTensor* sort_num = CpuTensorArg(args, 1, kArgsortNmsName, "sort_num");
  DLTensor* output = CpuTensorArg(args, 2, kArgsortNmsName, "output");
  int axis = NormalizeAxis(args[3].cast<int64_t>(), input, kArgsortNmsName);
  bool ascending = args[4].cast<bool>();
  KeyKind kind = RequireSortableKeys(input, kArgsortNmsName);
  AxisSplit s = SplitAtAxis(input, axis);
  RequireShapeAlongAxis(input, output, axis, s.length, kArgsortNmsName, "output");
  RequireIndexableLength(s.length, kArgsortNmsName);
  bool counts_are_ints =
      sort_num->dtype.code == kDLInt && (sort_num->dtype.bits == 32 || sort_num->dtype.bits == 64);
  if (!counts_are_ints || NumElements(sort_num) != s.rows()) {
    backend::ThrowError("ValueError",
                        ErrorText(kArgsortNmsName, ": sort_num must be an int32/int64 tensor with ",
                                  "one count per row (", s.rows(), " elements: the input's ",
                                  "shape without the sort axis); got ", DTypeName(sort_num->dtype),
                                  " with ", NumElements(sort_num), " elements"));
  }
  const char* counts = DataOf(sort_num);
  bool wide = sort_num->dtype.bits == 64;
  auto count_of = [&](int64_t row) {
    int64_t c = wide ? reinterpret_cast<const int64_t*>(counts)[row]
                     : reinterpret_cast<const int32_t*>(counts)[row];
    if (c < 0 || c > s.length) {
      backend::ThrowError("ValueError", ErrorText(kArgsortNmsName, ": sort_num[", row, "] = ", c,
                                                  " is outside [0, ", s.length, "]"));
    }
    return c;
  };
  DispatchIndexType(output->dtype, kArgsortNmsName, "output", [&](auto index_type) {
    using I = decltype(index_type);
    I* out = reinterpret_cast<I*>(DataOf(output));
    DispatchKeyWidth(input->dtype, [&](auto key) {
      using K = decltype(key);
      OrderRows<K>(input, s, kind, !ascending, s.length, count_of,
                   [&](int64_t row, const KeyIndex<K>* sorted, int64_t n) {
                     int64_t start = s.RowStart(row, s.length);
                     for (int64_t k = 0; k < s.length; ++k) {
                       out[start + k * s.inner] = static_cast<I>(k < n ? sorted[k].index : k);
                     }
                   });
    });
  });
}

}  // namespace

void RegisterSortFunctions() {
  backend::SetGlobalPackedFunction(kSortName, Sort);
  backend::SetGlobalPackedFunction(kArgsortName, Argsort);
  backend::SetGlobalPackedFunction(kArgsortNmsName, ArgsortNms);
}

}  // namespace extra
}  // namespace tvm_runtime
