#include "executable.h"

#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <sstream>
#include <utility>

#include "../compiler_versions.h"
#include "../tensor_record.h"
#include "constant_store.h"
#include "vm.h"
#include "vm_init.h"

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

namespace ffi = ::tvm::ffi;

constexpr const char* kKind = "relax.VMExecutable";

std::string Hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << std::uppercase << v;
  return os.str();
}

[[noreturn]] void ThrowBadCode(size_t instr, const std::string& why) {
  backend::ThrowError("ValueError", std::string("Corrupted ") + kKind + " bytecode: instruction #" +
                                        std::to_string(instr) + " " + why +
                                        ". The artifact was not written by apache-tvm 0.27's "
                                        "export_library or is damaged; re-export it.");
}

[[noreturn]] void ThrowBadFunction(const FuncInfo& f, const std::string& why) {
  backend::ThrowError("ValueError", std::string("Corrupted ") + kKind + ": function '" +
                                        SafeText(f.name) + "' " + why +
                                        ". The artifact was not written by apache-tvm 0.27's "
                                        "export_library or is damaged; re-export it.");
}

std::string ShapeText(const int64_t* data, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    out += std::to_string(data[i]);
  }
  return out;
}

std::string ValueText(const ffi::Any& c) {
  switch (c.type_index()) {
    case ffi::TypeIndex::kTVMFFITensor: {
      ffi::Tensor t = c.cast<ffi::Tensor>();
      return "tensor[" + ShapeText(t.shape().data(), t.shape().size()) + "] " +
             std::string(ffi::DLDataTypeToString(t.dtype()));
    }
    case ffi::TypeIndex::kTVMFFIShape: {
      ffi::Shape s = c.cast<ffi::Shape>();
      return "shape(" + ShapeText(s.data(), s.size()) + ")";
    }
    case ffi::TypeIndex::kTVMFFIInt:
      return std::to_string(c.cast<int64_t>());
    case ffi::TypeIndex::kTVMFFIFloat: {
      std::ostringstream os;
      os << c.cast<double>();
      return os.str();
    }
    case ffi::TypeIndex::kTVMFFIDataType:
      return std::string(ffi::DLDataTypeToString(c.cast<DLDataType>()));
    default:
      if (auto s = c.as<ffi::String>()) {
        std::string text = std::string(*s);
        if (text.size() > 60) text = text.substr(0, 57) + "...";
        return "\"" + SafeText(text) + "\"";
      }
      return c.GetTypeKey();
  }
}

const char* KindText(FuncInfo::Kind kind) {
  switch (kind) {
    case FuncInfo::Kind::kPackedFunc:
      return "packed function";
    case FuncInfo::Kind::kVMFunc:
      return "VM function";
    case FuncInfo::Kind::kVMTIRFunc:
      return "compiled VM function";
  }
  return "?";
}

/* A standalone executable file (`exec.save_to_file`), mapped rather than read: its tensor
 * constants are copied or uploaded straight out of it. */
std::shared_ptr<const Payload> MapExecutableFile(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path, MappedFile::Mode::kCopyOnWrite, /*keep_fd=*/true);
  if (!file->ok()) {
    backend::ThrowError("RuntimeError",
                        "cannot open Relax VM executable file '" + path + "': " + file->error());
  }
  return std::make_shared<MappedPayload>(file, file->data(), file->size());
}

}  // namespace

std::string SafeText(const std::string& text) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len != 0 && i + len <= n && (len != 1 || c >= 0x20 || c == '\n' || c == '\t');
    for (size_t k = 1; ok && k < len; ++k) ok = (s[i + k] >> 6) == 0x2;
    // Python's decoder also rejects overlong forms, surrogates and code points > U+10FFFF.
    if (ok && len == 2) ok = c >= 0xC2;
    if (ok && len == 3) ok = (c != 0xE0 || s[i + 1] >= 0xA0) && (c != 0xED || s[i + 1] < 0xA0);
    if (ok && len == 4)
      ok = c <= 0xF4 && (c != 0xF0 || s[i + 1] >= 0x90) && (c != 0xF4 || s[i + 1] < 0x90);
    if (ok) {
      out.append(text, i, len);
      i += len;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
    }
  }
  return out;
}

ffi::ObjectPtr<VMExecutable> VMExecutable::Parse(std::shared_ptr<const Payload> payload) {
  auto exec = ffi::make_object<VMExecutable>();
  exec->payload_ = std::move(payload);
  exec->constants_ = std::make_unique<ConstantPool>(exec->payload_);
  exec->ParseBody(exec->payload_->data(), exec->payload_->size());
  exec->Validate();
  // Parsing read only headers, but a mapped file faults in whole neighbourhoods (fault-around,
  // large folios): give them back, the constants' data is read when a VM needs it.
  exec->payload_->Release(exec->payload_->data(), exec->payload_->size());
  return exec;
}

void VMExecutable::ParseBody(const char* data, size_t size) {
  backend::BlobReader r(data, size, kKind);
  uint64_t magic = r.Read<uint64_t>();
  if (magic != kMagicV1 && magic != kMagicV2) {
    backend::ThrowError("ValueError", std::string("Not a ") + kKind + " (bad magic " + Hex(magic) +
                                          ", expected " + Hex(kMagicV2) + " or " + Hex(kMagicV1) +
                                          " at byte 0).");
  }
  std::string version = r.ReadString();
  if (version != kVMFormatVersion) {
    if (version.size() > 32) version = version.substr(0, 32) + "...";
    version = SafeText(version);
    backend::ThrowError(
        "ValueError",
        "Cannot load this Relax VM executable: this artifact was built by a TVM whose "
        "VM format is " +
            version + "; tvm-runtime supports " + kVMFormatVersion + ", the format of " +
            kSupportedCompilers + ". " + kReexportAdvice);
  }

  // Function table.
  uint64_t nfunc = r.ReadCount(4 + 8 + 4 * 8 + 8, "the function table");
  func_table.resize(nfunc);
  for (uint64_t i = 0; i < nfunc; ++i) {
    FuncInfo& f = func_table[i];
    int32_t kind = r.Read<int32_t>();
    if (kind < 0 || kind > 2)
      r.Fail("function #" + std::to_string(i) + " has unknown kind " + std::to_string(kind));
    f.kind = static_cast<FuncInfo::Kind>(kind);
    f.name = r.ReadString();
    f.start_instr = r.Read<int64_t>();
    f.end_instr = r.Read<int64_t>();
    f.num_args = r.Read<int64_t>();
    f.register_file_size = r.Read<int64_t>();
    f.param_names = r.ReadStringVector();
    func_map[f.name] = static_cast<int64_t>(i);
  }

  // Memory scopes of constants (format V2 only).
  if (magic == kMagicV2) {
    uint64_t nscope = r.ReadCount(16, "the memory-scope table");
    for (uint64_t i = 0; i < nscope; ++i) {
      int64_t index = r.Read<int64_t>();
      memory_scopes[index] = r.ReadString();
    }
  }

  // Constant pool.
  uint64_t nconst = r.ReadCount(4, "the constant pool");
  ConstantPool& constants = *constants_;
  for (uint64_t i = 0; i < nconst; ++i) {
    int32_t type_index = r.Read<int32_t>();
    switch (type_index) {
      case ffi::TypeIndex::kTVMFFITensor: {
        TensorRecordHeader h = ReadTensorRecordHeader(&r);
        const char* at = data + r.position();
        r.Skip(static_cast<size_t>(h.nbytes));
        constants.AddTensor(h.dtype, std::move(h.shape), at, h.nbytes);
        break;
      }
      case ffi::TypeIndex::kTVMFFIShape: {
        uint64_t ndim = r.ReadCount(8, "a shape constant");
        std::vector<int64_t> dims(ndim);
        for (auto& d : dims) d = r.Read<int64_t>();
        constants.AddValue(ffi::Shape(std::move(dims)));
        break;
      }
      case ffi::TypeIndex::kTVMFFIStr:
        constants.AddValue(ffi::String(r.ReadString()));
        break;
      case ffi::TypeIndex::kTVMFFIInt:
        constants.AddValue(r.Read<int64_t>());
        break;
      case ffi::TypeIndex::kTVMFFIFloat:
        constants.AddValue(r.Read<double>());
        break;
      case ffi::TypeIndex::kTVMFFIDataType:
        constants.AddValue(r.Read<DLDataType>());
        break;
      default:
        r.Fail("constant #" + std::to_string(i) + " has unsupported type index " +
               std::to_string(type_index));
    }
  }
  for (const auto& kv : memory_scopes) {
    if (kv.first < 0 || static_cast<uint64_t>(kv.first) >= nconst) {
      r.Fail("memory scope names constant #" + std::to_string(kv.first) + " of " +
             std::to_string(nconst));
    }
  }

  // Code.
  std::vector<int64_t> offsets = r.ReadVector<int64_t>();
  std::vector<int64_t> words = r.ReadVector<int64_t>();
  r.ExpectEnd();
  DecodeCode(offsets, words);
}

void VMExecutable::DecodeCode(const std::vector<int64_t>& offsets,
                              const std::vector<int64_t>& words) {
  const int64_t nwords = static_cast<int64_t>(words.size());
  auto need = [&](size_t i, int64_t at, int64_t n) {
    if (at < 0 || n < 0 || at > nwords || n > nwords - at) {
      ThrowBadCode(i, "(at word " + std::to_string(at) + ") runs past the end of the code (" +
                          std::to_string(nwords) + " words)");
    }
  };
  // First pass: sizes, so the argument array is allocated once and pointers into it stay valid.
  size_t total_args = 0;
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t at = offsets[i];
    need(i, at, 1);
    if (static_cast<Opcode>(words[at]) == Opcode::kCall) {
      need(i, at, 4);
      int64_t n = words[at + 3];
      if (n < 0 || n > (int64_t{1} << 20)) {
        ThrowBadCode(i, "has an invalid argument count " + std::to_string(n));
      }
      need(i, at + 4, n);
      total_args += static_cast<size_t>(n);
    }
  }
  arg_storage_.resize(total_args);
  instructions.resize(offsets.size());
  size_t next_arg = 0;
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t at = offsets[i];
    Instruction& ins = instructions[i];
    ins = Instruction{static_cast<Opcode>(words[at]), 0, 0, 0, nullptr};
    switch (ins.op) {
      case Opcode::kCall: {
        ins.a = words[at + 1];
        ins.b = words[at + 2];
        ins.num_args = static_cast<int32_t>(words[at + 3]);
        ins.args = arg_storage_.data() + next_arg;
        for (int32_t k = 0; k < ins.num_args; ++k) {
          arg_storage_[next_arg++] = Arg::Decode(words[at + 4 + k]);
        }
        break;
      }
      case Opcode::kRet:
        need(i, at, 2);
        ins.a = words[at + 1];
        break;
      case Opcode::kGoto:
        need(i, at, 2);
        ins.b = words[at + 1];
        break;
      case Opcode::kIf:
        need(i, at, 3);
        ins.a = words[at + 1];
        ins.b = words[at + 2];
        break;
      default:
        ThrowBadCode(i, "has unknown opcode " + std::to_string(words[at]));
    }
  }
}

void VMExecutable::Validate() {
  const int64_t ninstr = static_cast<int64_t>(instructions.size());
  const int64_t nconst = static_cast<int64_t>(constants_->size());
  const int64_t nfunc = static_cast<int64_t>(func_table.size());
  for (FuncInfo& f : func_table) {
    if (f.kind == FuncInfo::Kind::kPackedFunc) continue;
    if (f.num_args < 0 || f.register_file_size < f.num_args ||
        f.register_file_size > (int64_t{1} << 24)) {
      ThrowBadFunction(f, "has " + std::to_string(f.num_args) + " arguments and " +
                              std::to_string(f.register_file_size) + " registers");
    }
    if (f.kind != FuncInfo::Kind::kVMFunc) continue;
    if (f.start_instr < 0 || f.end_instr <= f.start_instr || f.end_instr > ninstr) {
      ThrowBadFunction(f, "spans instructions [" + std::to_string(f.start_instr) + ", " +
                              std::to_string(f.end_instr) + ") of " + std::to_string(ninstr));
    }
    const int64_t nreg = f.register_file_size;
    auto reg_ok = [&](int64_t r) {
      return (r >= 0 && r < nreg) || r == kVoidRegister || r == kVMRegister;
    };
    auto target_ok = [&](int64_t t) { return t >= f.start_instr && t < f.end_instr; };
    for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) {
      Instruction& ins = instructions[pc];
      std::string where = "(in function '" + SafeText(f.name) + "')";
      switch (ins.op) {
        case Opcode::kCall: {
          if (ins.b < 0 || ins.b >= nfunc) {
            ThrowBadCode(pc, where + " calls function index " + std::to_string(ins.b) + " of " +
                                 std::to_string(nfunc));
          }
          if (!(ins.a >= 0 && ins.a < nreg) && ins.a < kBeginSpecialReg) {
            ThrowBadCode(pc, where + " writes register " + std::to_string(ins.a) + " of " +
                                 std::to_string(nreg));
          }
          Arg* args = arg_storage_.data() + (ins.args - arg_storage_.data());
          for (int32_t k = 0; k < ins.num_args; ++k) {
            Arg& arg = args[k];
            switch (arg.kind) {
              case ArgKind::kRegister:
                if (!reg_ok(arg.value)) {
                  ThrowBadCode(pc, where + " reads register " + std::to_string(arg.value) + " of " +
                                       std::to_string(nreg));
                }
                if (arg.value == kVoidRegister) arg.kind = ArgKind::kVoid;
                if (arg.value == kVMRegister) arg.kind = ArgKind::kVMContext;
                break;
              case ArgKind::kImmediate:
              case ArgKind::kVoid:
              case ArgKind::kVMContext:
                break;
              case ArgKind::kConstIdx:
                if (arg.value < 0 || arg.value >= nconst) {
                  ThrowBadCode(pc, where + " uses constant " + std::to_string(arg.value) + " of " +
                                       std::to_string(nconst));
                }
                break;
              case ArgKind::kFuncIdx:
                if (arg.value < 0 || arg.value >= nfunc) {
                  ThrowBadCode(pc, where + " uses function index " + std::to_string(arg.value) +
                                       " of " + std::to_string(nfunc));
                }
                break;
              default:
                ThrowBadCode(pc, where + " has an argument of unknown kind " +
                                     std::to_string(static_cast<int>(arg.kind)));
            }
          }
          f.max_call_args = std::max(f.max_call_args, ins.num_args);
          if (pc + 1 >= f.end_instr) ThrowBadCode(pc, where + " falls off the end of the function");
          break;
        }
        case Opcode::kRet:
          if (!reg_ok(ins.a)) {
            ThrowBadCode(pc, where + " returns register " + std::to_string(ins.a) + " of " +
                                 std::to_string(nreg));
          }
          break;
        case Opcode::kGoto:
          if (!target_ok(pc + ins.b)) {
            ThrowBadCode(
                pc, where + " jumps outside its function (offset " + std::to_string(ins.b) + ")");
          }
          break;
        case Opcode::kIf:
          if (!reg_ok(ins.a)) {
            ThrowBadCode(pc, where + " tests register " + std::to_string(ins.a) + " of " +
                                 std::to_string(nreg));
          }
          if (ins.b <= 1 || !target_ok(pc + ins.b) || pc + 1 >= f.end_instr) {
            ThrowBadCode(pc, where + " branches outside its function (false offset " +
                                 std::to_string(ins.b) + ")");
          }
          break;
      }
    }
  }
}

std::string VMExecutable::ArgText(const Arg& arg) const {
  switch (arg.kind) {
    case ArgKind::kRegister:
      return "%" + std::to_string(arg.value);
    case ArgKind::kVoid:
      return "%void";
    case ArgKind::kVMContext:
      return "%vm";
    case ArgKind::kImmediate:
      return "i" + std::to_string(arg.value);
    case ArgKind::kConstIdx:
      return "c[" + std::to_string(arg.value) + "]";
    case ArgKind::kFuncIdx: {
      size_t i = static_cast<size_t>(arg.value);
      return i < func_table.size() ? "f[" + func_table[i].name + "]" : "f[?]";
    }
  }
  return "?";
}

std::string VMExecutable::ConstantText(size_t i) const {
  return constants_->IsTensor(i) ? constants_->Describe(i) : ValueText(constants_->Value(i));
}

std::string VMExecutable::Stats() const {
  std::ostringstream os;
  os << "Relax VM executable statistics:\n";
  os << "  Constant pool (# " << constants_->size() << "): [";
  for (size_t i = 0; i < constants_->size(); ++i) os << (i ? ", " : "") << ConstantText(i);
  os << "]\n";
  os << "  Globals (#" << func_table.size() << "): [";
  for (size_t i = 0; i < func_table.size(); ++i) os << (i ? ", " : "") << func_table[i].name;
  os << "]\n";
  return SafeText(os.str());
}

std::string VMExecutable::AsText() const {
  auto reg = [](int64_t r) {
    if (r == kVoidRegister) return std::string("%void");
    if (r == kVMRegister) return std::string("%vm");
    return "%" + std::to_string(r);
  };
  std::ostringstream os;
  for (const FuncInfo& f : func_table) {
    os << "@" << f.name;
    if (f.kind == FuncInfo::Kind::kPackedFunc) {
      os << ": " << KindText(f.kind) << "\n";
      continue;
    }
    os << "(";
    for (size_t i = 0; i < f.param_names.size(); ++i) os << (i ? ", " : "") << f.param_names[i];
    os << "): " << KindText(f.kind) << ", " << f.num_args << " args, " << f.register_file_size
       << " registers";
    if (f.kind != FuncInfo::Kind::kVMFunc) {
      os << "\n";
      continue;
    }
    os << ", instructions [" << f.start_instr << ", " << f.end_instr << ")\n";
    for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) {
      const Instruction& ins = instructions[pc];
      os << "  " << pc << ": " << OpcodeName(ins.op) << " ";
      switch (ins.op) {
        case Opcode::kCall:
          os << func_table[ins.b].name << "(";
          for (int32_t k = 0; k < ins.num_args; ++k) os << (k ? ", " : "") << ArgText(ins.args[k]);
          os << ") -> " << reg(ins.a);
          break;
        case Opcode::kRet:
          os << reg(ins.a);
          break;
        case Opcode::kGoto:
          os << (ins.b >= 0 ? "+" : "") << ins.b << " (to " << pc + ins.b << ")";
          break;
        case Opcode::kIf:
          os << reg(ins.a) << " else +" << ins.b << " (to " << pc + ins.b << ")";
          break;
      }
      os << "\n";
    }
  }
  os << "constants:\n";
  for (size_t i = 0; i < constants_->size(); ++i) {
    os << "  c[" << i << "] = " << ConstantText(i);
    auto it = memory_scopes.find(static_cast<int64_t>(i));
    if (it != memory_scopes.end()) os << " (scope " << it->second << ")";
    os << "\n";
  }
  return SafeText(os.str());
}

ffi::Optional<ffi::Function> VMExecutable::GetFunction(const ffi::String& name) {
  ffi::ObjectPtr<VMExecutable> self = ffi::GetObjectPtr<VMExecutable>(this);
  if (name == "stats") {
    return ffi::Function::FromTyped([self]() { return ffi::String(self->Stats()); });
  }
  if (name == "as_text") {
    return ffi::Function::FromTyped([self]() { return ffi::String(self->AsText()); });
  }
  if (name == "has_function") {
    return ffi::Function::FromTyped(
        [self](const ffi::String& fname) { return self->HasFunction(std::string(fname)); });
  }
  if (name == "constant_stats") {
    // How the tensor constants were materialized so far (tests and diagnostics).
    return ffi::Function::FromTyped([self]() {
      ConstantPoolStats st = self->constants_->stats();
      return ffi::Map<ffi::String, int64_t>{{"tensors", st.tensors},
                                            {"aliased", st.aliased},
                                            {"copied", st.copied},
                                            {"stored", st.stored},
                                            {"stored_bytes", st.stored_bytes},
                                            {"uploaded", st.uploaded},
                                            {"aliased_bytes", st.aliased_bytes},
                                            {"copied_bytes", st.copied_bytes}};
    });
  }
  if (name == "vm_load_executable") {
    return ffi::Function::FromTyped(
        [self]() { return ffi::Module(ffi::make_object<VirtualMachine>(self)); });
  }
  return std::nullopt;
}

void RegisterVMExecutable() {
  RegisterWeightStoreInfo();
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("ffi.Module.load_from_bytes.relax.VMExecutable",
           [](const ffi::Bytes& blob) { return ffi::Module(VMExecutable::Parse(blob)); })
      .def("ffi.Module.load_from_file.relax.VMExecutable", [](const std::string& path) {
        return ffi::Module(VMExecutable::Parse(MapExecutableFile(path)));
      });
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
