/*
 * tvm.contrib.sort.topk, as apache-tvm 0.27's compiled code calls it:
 *   topk(input, values, indices, k, axis, ret_type="both", is_ascend)
 *   topk(input, values, k, axis, ret_type="values", is_ascend)
 *   topk(input, indices, k, axis, ret_type="indices", is_ascend)
 * k < 1 means the whole axis.  The result is the k first elements of the stable order (largest
 * first unless is_ascend; equal elements by ascending index), written along `axis` of outputs
 * whose extent there is k.
 */
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "error_text.h"
#include "extra_register.h"
#include "sort_rows.h"

namespace tvm_runtime {
namespace extra {
namespace {

constexpr const char* kTopkName = "tvm.contrib.sort.topk";

void Topk(::tvm::ffi::PackedArgs args, ::tvm::ffi::Any*) {
  int nargs = args.size();
  if (nargs != 6 && nargs != 7) {
    backend::ThrowError(
        "TypeError", ErrorText(kTopkName,
                               " takes (input, values, indices, k, axis, \"both\", is_ascend) or "
                               "(input, out, k, axis, \"values\"|\"indices\", is_ascend), got ",
                               nargs, " arguments"));
  }
  auto ret_type = args[nargs - 2].try_cast<std::string>();
  if (!ret_type.has_value() ||
      (*ret_type != "both" && *ret_type != "values" && *ret_type != "indices")) {
    backend::ThrowError("ValueError", ErrorText(kTopkName, ": ret_type (argument ", nargs - 2,
                                                ") must be \"both\", \"values\" or \"indices\""));
  }
  int expected = *ret_type == "both" ? 7 : 6;
  if (nargs != expected) {
    backend::ThrowError("TypeError", ErrorText(kTopkName, ": ret_type \"", *ret_type, "\" takes ",
                                               expected, " arguments, got ", nargs));
  }
  DLTensor* input = CpuTensorArg(args, 0, kTopkName, "input");
  DLTensor* values = nullptr;
  DLTensor* indices = nullptr;
  if (*ret_type == "both") {
    values = CpuTensorArg(args, 1, kTopkName, "values");
    indices = CpuTensorArg(args, 2, kTopkName, "indices");
  } else if (*ret_type == "values") {
    values = CpuTensorArg(args, 1, kTopkName, "values");
  } else {
    indices = CpuTensorArg(args, 1, kTopkName, "indices");
  }
  int64_t k = args[nargs - 4].cast<int64_t>();
  int axis = NormalizeAxis(args[nargs - 3].cast<int64_t>(), input, kTopkName);
  bool ascending = args[nargs - 1].cast<bool>();
  KeyKind kind = RequireSortableKeys(input, kTopkName);
  AxisSplit s = SplitAtAxis(input, axis);
  RequireIndexableLength(s.length, kTopkName);
  int64_t extent = k < 1 ? s.length : k;
  int64_t written = std::min(extent, s.length);
  if (values != nullptr) {
    RequireShapeAlongAxis(input, values, axis, extent, kTopkName, "values");
    if (DTypeName(values->dtype) != DTypeName(input->dtype)) {
      backend::ThrowError("ValueError",
                          ErrorText(kTopkName, ": values dtype ", DTypeName(values->dtype),
                                    " differs from input dtype ", DTypeName(input->dtype)));
    }
  }
  if (indices != nullptr) {
    RequireShapeAlongAxis(input, indices, axis, extent, kTopkName, "indices");
  }
  const char* in = DataOf(input);
  char* values_out = values ? DataOf(values) : nullptr;
  // Indices default to int64 when not requested, as in 0.27 (the type is then unused).
  DLDataType index_dtype = indices ? indices->dtype : DLDataType{kDLInt, 64, 1};
  DispatchIndexType(index_dtype, kTopkName, "indices", [&](auto index_type) {
    using I = decltype(index_type);
    I* indices_out = indices ? reinterpret_cast<I*>(DataOf(indices)) : nullptr;
    DispatchKeyWidth(input->dtype, [&](auto key) {
      using K = decltype(key);
      OrderRows<K>(
          input, s, kind, !ascending, written, [&](int64_t) { return s.length; },
          [&](int64_t row, const KeyIndex<K>* sorted, int64_t) {
            int64_t src = s.RowStart(row, s.length);
            int64_t dst = s.RowStart(row, extent);
            for (int64_t j = 0; j < written; ++j) {
              int64_t at = dst + j * s.inner;
              if (indices_out) indices_out[at] = static_cast<I>(sorted[j].index);
              if (values_out) CopyElement<K>(values_out, at, in, src + sorted[j].index * s.inner);
            }
          });
    });
  });
}

}  // namespace

void RegisterTopkFunction() { backend::SetGlobalPackedFunction(kTopkName, Topk); }

}  // namespace extra
}  // namespace tvm_runtime
