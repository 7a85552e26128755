/*
 * Builtins the interpreter runs inline, without a packed call, on its fast path (no instrument,
 * no profiler).  A decode step of a small LLM makes ~230 call instructions for ~36 kernels; most
 * of the rest are three builtins whose work is a few loads and stores:
 *
 *   vm.builtin.null_value()                       frees a register
 *   vm.builtin.make_shape(heap, n, n x (code, v))  a Shape of immediates and shape-heap slots
 *   vm.builtin.tuple_getitem(tuple, i)             a field of a tuple
 *
 * When a VM loads its executable, each call instruction whose callee resolved to the runtime's
 * own registration of one of these (the same function object, so a global re-registered under
 * that name or a kernel library exporting it keeps being called) and whose operands are of the
 * expected kinds gets an InlineCall.  At run time an inline call that meets anything unusual (a
 * heap that is not a tensor, a slot out of range, an index out of range, a value that is not a
 * tuple) returns false and the interpreter makes the ordinary call instead, so errors keep their
 * exact type and message.  The profiler and instruments see every call as before: they run on
 * the slow path, which never inlines.
 */
#ifndef TVM_RUNTIME_CORE_VM_INLINE_BUILTINS_H_
#define TVM_RUNTIME_CORE_VM_INLINE_BUILTINS_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "bytecode.h"

namespace tvm_runtime {
namespace core {
namespace vm {

enum class InlineOp : uint8_t { kNone, kNullValue, kMakeShape, kTupleGetItem };

/* Records the function objects registered for the inlined builtins' names; called once, right
 * after the VM's builtins are registered (register.cc). */
void RememberInlineBuiltins();

/* The inline form of a call to `callee`, or kNone when `callee` is not one of the runtime's own
 * registrations of an inlined builtin. */
InlineOp InlineOpOf(const ::tvm::ffi::FunctionObj* callee);

/* make_shape's operands decoded at load: the heap register (or -1 for %void) and the
 * (code, value) pairs.  (Returning the Shape an instruction made last when the dimensions repeat
 * was measured slower than a fresh one: the 45 cached Shapes of a decode step are cold in the
 * cache, a freshly freed block is not.) */
struct MakeShapePlan {
  int64_t heap_reg = -1;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (code: 0 immediate / 1 heap slot, value)
};

/* The plan of a make_shape call, or false when its operands are not the compiler's usual
 * (heap register or %void, immediate count, immediate pairs of known codes, the right number):
 * such a call stays an ordinary call. */
bool PlanMakeShape(const Instruction& ins, MakeShapePlan* plan);

/* Runs `plan` on the frame's registers; false (nothing written) when the ordinary call must run
 * instead to raise its error. */
bool RunMakeShape(const MakeShapePlan& plan, const ::tvm::ffi::Any* regs, ::tvm::ffi::Any* ret);

/* tuple_getitem(register, immediate) inline; false when the operands are of other kinds. */
bool CanInlineTupleGetItem(const Instruction& ins);
/* false (nothing written) when the value is not a tuple or the index is out of range. */
bool RunTupleGetItem(const Instruction& ins, const ::tvm::ffi::Any* regs, ::tvm::ffi::Any* ret);

/* One entry per instruction of the executable: how the fast path runs it. */
struct InlineCall {
  InlineOp op = InlineOp::kNone;
  int32_t plan = -1;  // kMakeShape: index into the VM's make_shape plans
};

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_INLINE_BUILTINS_H_
