#include "inline_builtins.h"

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

namespace ffi = ::tvm::ffi;

// Longer shapes are rare; they keep the ordinary call.
constexpr size_t kMaxInlineShapeDims = 16;

struct InlinedBuiltinFunctions {
  ffi::Function null_value, make_shape, tuple_getitem;
};

// Set once at registration, before any VM exists; never freed (read by VMs until exit).
const InlinedBuiltinFunctions* inlined_builtins = nullptr;

ffi::Function RegisteredBuiltin(const char* name) {
  return ffi::Function::GetGlobal(name).value_or(ffi::Function());
}

}  // namespace

void RememberInlineBuiltins() {
  if (inlined_builtins != nullptr) return;
  inlined_builtins = new InlinedBuiltinFunctions{RegisteredBuiltin("vm.builtin.null_value"),
                                                 RegisteredBuiltin("vm.builtin.make_shape"),
                                                 RegisteredBuiltin("vm.builtin.tuple_getitem")};
}

InlineOp InlineOpOf(const ffi::FunctionObj* callee) {
  if (inlined_builtins == nullptr || callee == nullptr) return InlineOp::kNone;
  if (callee == inlined_builtins->null_value.get()) return InlineOp::kNullValue;
  if (callee == inlined_builtins->make_shape.get()) return InlineOp::kMakeShape;
  if (callee == inlined_builtins->tuple_getitem.get()) return InlineOp::kTupleGetItem;
  return InlineOp::kNone;
}

bool PlanMakeShape(const Instruction& ins, MakeShapePlan* plan) {
  if (ins.num_args < 2) return false;
  const Arg& heap = ins.args[0];
  const Arg& count = ins.args[1];
  if (heap.kind != ArgKind::kRegister && heap.kind != ArgKind::kVoid) return false;
  if (count.kind != ArgKind::kImmediate || count.value < 0 ||
      static_cast<size_t>(count.value) > kMaxInlineShapeDims ||
      2 + 2 * count.value != ins.num_args) {
    return false;
  }
  MakeShapePlan out;
  out.heap_reg = heap.kind == ArgKind::kRegister ? heap.value : -1;
  for (int32_t k = 2; k < ins.num_args; k += 2) {
    const Arg& code = ins.args[k];
    const Arg& value = ins.args[k + 1];
    if (code.kind != ArgKind::kImmediate || value.kind != ArgKind::kImmediate) return false;
    if (code.value != 0 && code.value != 1) return false;  // the call raises the unknown code
    out.dims.emplace_back(code.value, value.value);
  }
  *plan = std::move(out);
  return true;
}

bool RunMakeShape(const MakeShapePlan& plan, const ffi::Any* regs, ffi::Any* ret) {
  // The shape heap as make_shape reads it: None is an empty heap; an int64 tensor of rank 1
  // has shape[0] slots (another rank: none).
  const int64_t* heap = nullptr;
  int64_t heap_size = 0;
  if (plan.heap_reg >= 0 && regs[plan.heap_reg] != nullptr) {
    auto t = regs[plan.heap_reg].try_cast<DLTensor*>();
    if (!t.has_value()) return false;
    const DLTensor* h = *t;
    heap = reinterpret_cast<const int64_t*>(static_cast<const char*>(h->data) + h->byte_offset);
    heap_size = h->ndim == 1 ? h->shape[0] : 0;
  }
  int64_t dims[kMaxInlineShapeDims];
  size_t n = plan.dims.size();
  for (size_t i = 0; i < n; ++i) {
    const auto& [code, v] = plan.dims[i];
    if (code == 0) {
      dims[i] = v;
    } else {
      if (v < 0 || v >= heap_size) return false;
      dims[i] = heap[v];
    }
  }
  *ret = ffi::Shape(dims, dims + n);
  return true;
}

bool CanInlineTupleGetItem(const Instruction& ins) {
  return ins.num_args == 2 && ins.args[0].kind == ArgKind::kRegister &&
         ins.args[1].kind == ArgKind::kImmediate;
}

bool RunTupleGetItem(const Instruction& ins, const ffi::Any* regs, ffi::Any* ret) {
  const auto* arr = regs[ins.args[0].value].as<ffi::ArrayObj>();
  int64_t index = ins.args[1].value;
  if (arr == nullptr || index < 0 || index >= static_cast<int64_t>(arr->size())) return false;
  *ret = (*arr)[index];
  return true;
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
