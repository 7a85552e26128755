/*
 * Relax VM bytecode as apache-tvm 0.27 serializes it (VM format "0.14"), and the decoded form the
 * interpreter runs.
 *
 * Wire format: every word is an int64.  Instruction i starts at instr_data[instr_offset[i]]:
 *   Call  1, dst, func_idx, num_args, arg_0 .. arg_{n-1}
 *   Ret   2, result_reg
 *   Goto  3, pc_offset                 (relative)
 *   If    4, cond_reg, false_offset    (cond != 0: pc + 1, else pc + false_offset)
 * An argument word keeps its kind in bits 63..56 and a value in the low 56 bits, sign-extended
 * from bit 55.  Register numbers >= 2^54 are special: %void (reads None; as a destination the
 * result is dropped) and %vm (reads the VM context pointer).
 *
 * Decoding happens once when the executable is loaded: the interpreter then walks a vector of
 * fixed-size Instruction records whose arguments are already split into (kind, value) pairs and
 * whose operands were validated, so the dispatch loop does no bounds checks.
 */
#ifndef TVM_RUNTIME_CORE_VM_BYTECODE_H_
#define TVM_RUNTIME_CORE_VM_BYTECODE_H_

#include <cstdint>

namespace tvm_runtime {
namespace core {
namespace vm {

enum class Opcode : int64_t {
  kCall = 1,
  kRet = 2,
  kGoto = 3,
  kIf = 4,
};

enum class ArgKind : uint8_t {
  kRegister = 0,
  kImmediate = 1,
  kConstIdx = 2,
  kFuncIdx = 3,
  // Not on the wire: a kRegister argument naming %void / %vm is rewritten to these at load time
  // so the interpreter's register read needs no range test.
  kVoid = 0x10,
  kVMContext = 0x11,
};

constexpr int64_t kBeginSpecialReg = int64_t{1} << 54;
constexpr int64_t kVoidRegister = kBeginSpecialReg;
constexpr int64_t kVMRegister = kBeginSpecialReg + 1;

constexpr int kArgKindShift = 56;
constexpr int kArgValueBits = 56;

/* One decoded instruction argument. */
struct Arg {
  ArgKind kind;
  int64_t value;

  static Arg Decode(int64_t word) {
    uint64_t bits = static_cast<uint64_t>(word);
    Arg a;
    a.kind = static_cast<ArgKind>(bits >> kArgKindShift);
    // Sign-extend the low 56 bits.
    uint64_t low = bits & ((uint64_t{1} << kArgValueBits) - 1);
    if (low & (uint64_t{1} << (kArgValueBits - 1))) low |= ~((uint64_t{1} << kArgValueBits) - 1);
    a.value = static_cast<int64_t>(low);
    return a;
  }
};

/* One decoded instruction.  `a` and `b` depend on the opcode:
 *   Call: a = dst register, b = func_idx, args[0..num_args)
 *   Ret:  a = result register
 *   Goto: b = pc offset
 *   If:   a = condition register, b = false offset */
struct Instruction {
  Opcode op;
  int32_t num_args;
  int64_t a;
  int64_t b;
  const Arg* args;
};

inline const char* OpcodeName(Opcode op) {
  switch (op) {
    case Opcode::kCall:
      return "call";
    case Opcode::kRet:
      return "ret";
    case Opcode::kGoto:
      return "goto";
    case Opcode::kIf:
      return "if";
  }
  return "?";
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_BYTECODE_H_
