/*
 * The `relax.VMExecutable` module kind: a Relax VM program as apache-tvm 0.27 serializes it
 * (root module of an exported Relax model, importing the `_lib` of its TIR kernels).
 *
 * Serialized layout (all integers little-endian):
 *   u64 magic            kMagicV2 (written by 0.27) or kMagicV1 (no memory-scope section)
 *   str version          must be "0.14"
 *   vec<FuncInfo>        i32 kind; str name; i64 start; i64 end; i64 num_args; i64 reg_size;
 *                        vec<str> param_names
 *   (V2) u64 n; n x (i64 constant index; str scope)
 *   u64 n; n x (i32 type index; value)   constants: Tensor record, Shape, Str, Int, Float, DataType
 *   vec<i64> instr_offset; vec<i64> instr_data
 *
 * Loading parses and validates everything once (bounds, opcodes, register numbers, jump targets
 * and constant/function indices), so a truncated or corrupted blob is a ValueError naming the
 * byte offset or instruction, and the interpreter never has to check an operand again.  Tensor
 * constants are the exception: only their headers are read; their data stays in the payload
 * until a VM needs it (constant_pool.h).
 */
#ifndef TVM_RUNTIME_CORE_VM_EXECUTABLE_H_
#define TVM_RUNTIME_CORE_VM_EXECUTABLE_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bytecode.h"
#include "constant_pool.h"
#include "payload.h"

namespace tvm_runtime {
namespace core {
namespace vm {

constexpr uint64_t kMagicV1 = 0xD225DE2F4214151DULL;
constexpr uint64_t kMagicV2 = 0xD225DE2F4214151EULL;
constexpr const char* kVMFormatVersion = "0.14";

/* `text` with every byte that is not part of valid UTF-8 (or is a control character) shown as
 * \xNN, so names and strings from a damaged executable can go into messages and listings. */
std::string SafeText(const std::string& text);

struct FuncInfo {
  enum class Kind : int32_t { kPackedFunc = 0, kVMFunc = 1, kVMTIRFunc = 2 };
  Kind kind;
  std::string name;
  int64_t start_instr;
  int64_t end_instr;
  int64_t num_args;
  int64_t register_file_size;
  std::vector<std::string> param_names;
  // Derived at load time: the widest Call instruction of this function (VMFunc only).
  int32_t max_call_args = 0;
};

class VMExecutable : public ::tvm::ffi::ModuleObj {
 public:
  /* Parses a serialized executable; throws ValueError on anything malformed. */
  static ::tvm::ffi::ObjectPtr<VMExecutable> Parse(std::shared_ptr<const Payload> payload);
  static ::tvm::ffi::ObjectPtr<VMExecutable> Parse(::tvm::ffi::Bytes payload) {
    return Parse(std::make_shared<BytesPayload>(std::move(payload)));
  }

  const char* kind() const final { return "relax.VMExecutable"; }
  int GetPropertyMask() const final {
    return ::tvm::ffi::Module::kBinarySerializable | ::tvm::ffi::Module::kRunnable;
  }
  ::tvm::ffi::Optional<::tvm::ffi::Function> GetFunction(const ::tvm::ffi::String& name) final;
  /* The bytes exactly as loaded. */
  ::tvm::ffi::Bytes SaveToBytes() const final { return payload_->ToBytes(); }

  std::string Stats() const;
  std::string AsText() const;
  bool HasFunction(const std::string& name) const { return func_map.count(name) != 0; }

  /* Index of `name` in the function table, or -1. */
  int64_t FindFunction(const std::string& name) const {
    auto it = func_map.find(name);
    return it == func_map.end() ? -1 : it->second;
  }

  std::vector<FuncInfo> func_table;
  std::unordered_map<std::string, int64_t> func_map;
  std::unordered_map<int64_t, std::string> memory_scopes;
  ConstantPool& constants() { return *constants_; }
  std::vector<Instruction> instructions;

 private:
  void ParseBody(const char* data, size_t size);
  void DecodeCode(const std::vector<int64_t>& offsets, const std::vector<int64_t>& words);
  void Validate();
  std::string ArgText(const Arg& arg) const;
  std::string ConstantText(size_t i) const;

  // The serialized form where the loader left it (no copy): tensor constants are read from it,
  // and SaveToBytes returns it.
  std::shared_ptr<const Payload> payload_;
  std::unique_ptr<ConstantPool> constants_;
  std::vector<Arg> arg_storage_;
};

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_EXECUTABLE_H_
