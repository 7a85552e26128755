#include "vm.h"

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm_runtime/backend/error.h>

#include <mutex>
#include <utility>

#include "../device_registry.h"
#include "../ffi_names.h"
#include "../missing_function_advice.h"
#include "../wheel_owners.h"

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

using ffi::Function;

// Deep enough for any real model, shallow enough to fail before the C++ stack does.
constexpr size_t kMaxCallDepth = 4096;

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

// Follows args[start:] as indices into nested tuples (Arrays).
Any IndexNested(Any value, PackedArgs args, int start) {
  for (int i = start; i < args.size(); ++i) {
    const ffi::ArrayObj* arr = value.as<ffi::ArrayObj>();
    if (arr == nullptr) {
      backend::ThrowError("ValueError", "cannot index into an output that is not a tuple");
    }
    int64_t index = args[i].cast<int64_t>();
    if (index < 0 || index >= static_cast<int64_t>(arr->size())) {
      backend::ThrowError("IndexError", "output index " + std::to_string(index) +
                                            " out of range for a tuple of " +
                                            std::to_string(arr->size()));
    }
    value = (*arr)[index];
  }
  return value;
}

}  // namespace

VMClosure::VMClosure(ffi::String func_name, Function impl) {
  auto n = ffi::make_object<VMClosureObj>();
  n->func_name = std::move(func_name);
  n->impl = std::move(impl);
  data_ = std::move(n);
}

Function BindLastArgs(Function func, std::vector<Any> last_args) {
  return Function::FromPacked([func, last_args](PackedArgs args, Any* rv) {
    std::vector<AnyView> all(args.size() + last_args.size());
    std::copy(args.data(), args.data() + args.size(), all.begin());
    for (size_t i = 0; i < last_args.size(); ++i) all[args.size() + i] = last_args[i];
    func.CallPacked(all.data(), static_cast<int32_t>(all.size()), rv);
  });
}

// Acquires a frame for one VM function call and clears its registers on the way out, so the
// tensors it held are released even when the call throws.  The VM runs one call stack at a
// time: calls from several threads are serialized (re-entrant calls on one thread nest).
class VirtualMachine::FrameGuard {
 public:
  FrameGuard(VirtualMachine* vm, const FuncInfo& f)
      : vm_(vm), lock_(vm->run_mu_), nreg_(f.register_file_size) {
    if (vm->depth_ >= kMaxCallDepth) {
      backend::ThrowError(
          "RuntimeError",
          "Relax VM call depth exceeded " + std::to_string(kMaxCallDepth) + " in '" + f.name + "'");
    }
    if (vm->depth_ == vm->frames_.size()) vm->frames_.push_back(std::make_unique<Frame>());
    frame_ = vm->frames_[vm->depth_].get();
    if (frame_->regs.size() < static_cast<size_t>(nreg_)) frame_->regs.resize(nreg_);
    if (frame_->call_args.size() < static_cast<size_t>(f.max_call_args) + 4) {
      frame_->call_args.resize(f.max_call_args + 4);  // +4: instrument prefix
    }
    ++vm->depth_;
  }
  ~FrameGuard() {
    Any* regs = frame_->regs.data();
    for (int64_t i = 0; i < nreg_; ++i) regs[i].reset();
    --vm_->depth_;
  }
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;
  Frame* frame() const { return frame_; }

 private:
  VirtualMachine* vm_;
  std::lock_guard<std::recursive_mutex> lock_;
  Frame* frame_ = nullptr;
  int64_t nreg_;
};

VirtualMachine::VirtualMachine(ffi::ObjectPtr<VMExecutable> exec) : exec_(std::move(exec)) {
  // The kernels (and their device modules) are the executable's imports.
  this->imports_ = exec_->imports();
}

VirtualMachine* VirtualMachine::FromContext(const AnyView& ctx) {
  auto ptr = ctx.try_cast<void*>();
  auto* vm = ptr.has_value() ? static_cast<VirtualMachine*>(*ptr) : nullptr;
  if (vm == nullptr || vm->context_magic_ != kContextMagic) {
    backend::ThrowError(
        "TypeError",
        "expected the Relax VM context (%vm) as the first argument, got " + ctx.GetTypeKey());
  }
  return vm;
}

void VirtualMachine::RequireInitialized() const {
  if (!initialized_) {
    backend::ThrowError("RuntimeError",
                        "the Relax VM is not initialized: call vm_initialization(device_type, "
                        "device_id, alloc_type, ...) first (tvm.runtime.vm.VirtualMachine does)");
  }
}

int64_t VirtualMachine::RequireFunction(const std::string& name) const {
  int64_t fidx = exec_->FindFunction(name);
  if (fidx < 0) backend::ThrowError("ValueError", "Unknown function: " + name);
  return fidx;
}

//------------------------------------------------------------------------------------------
// Initialization
//------------------------------------------------------------------------------------------

void VirtualMachine::Init(PackedArgs args) {
  if (args.size() == 0 || args.size() % 3 != 0) {
    backend::ThrowError("ValueError",
                        "vm_initialization expects (device_type, device_id, alloc_type) triplets, "
                        "got " +
                            std::to_string(args.size()) + " arguments");
  }
  std::vector<DLDevice> devices;
  std::vector<Allocator*> allocators;
  for (int i = 0; i < args.size(); i += 3) {
    DLDevice dev{static_cast<DLDeviceType>(args[i].cast<int>()), args[i + 1].cast<int>()};
    devices.push_back(dev);
    allocators.push_back(GetAllocator(dev, args[i + 2].cast<int>()));
  }
  // Constants: tensors are placed on the first device, straight from the executable's payload.
  ConstantPool& pool = exec_->constants();
  std::vector<Any> consts;
  consts.reserve(pool.size());
  for (size_t i = 0; i < pool.size(); ++i) {
    auto scope = exec_->memory_scopes.find(static_cast<int64_t>(i));
    if (scope != exec_->memory_scopes.end() && !scope->second.empty() &&
        scope->second != "global") {
      backend::ThrowError("ValueError", "constant #" + std::to_string(i) +
                                            " of this executable needs memory scope '" +
                                            scope->second +
                                            "', which tvm-runtime does not support (only "
                                            "'global')");
    }
    if (pool.IsTensor(i)) {
      consts.emplace_back(pool.OnDevice(i, devices[0], allocators[0]));
    } else {
      consts.push_back(pool.Value(i));
    }
  }
  devices_ = std::move(devices);
  allocators_ = std::move(allocators);
  const_pool_ = std::move(consts);
  initialized_ = false;
  InitFuncPool();
  InitInlineCalls();
  initialized_ = true;
}

ffi::Optional<Function> VirtualMachine::FindPackedFunction(const std::string& name) const {
  ffi::String key(name);
  for (const Any& lib : imports_) {
    if (auto f = lib.cast<ffi::Module>()->GetFunction(key, /*query_imports=*/true)) return f;
  }
  if (auto f = Function::GetGlobal(name)) return *f;
  // A function of a backend wheel (tvm.contrib.sort.* of tvm-runtime-extra) in a C++ program
  // that has not loaded that wheel yet.
  if (LoadWheelOfFunction(name)) {
    if (auto f = Function::GetGlobal(name)) return *f;
  }
  return std::nullopt;
}

VMClosure VirtualMachine::MakeClosure(int64_t fidx) {
  const FuncInfo& f = exec_->func_table[fidx];
  if (f.kind == FuncInfo::Kind::kVMFunc) {
    // No strong reference to the VM here: closures live in the VM's own function pool.
    return VMClosure(f.name, Function::FromPacked([fidx](PackedArgs args, Any* rv) {
                       if (args.size() < 1) {
                         backend::ThrowError("TypeError", "a VM closure needs the VM context");
                       }
                       VirtualMachine* vm = FromContext(args[0]);
                       *rv = vm->InvokeBytecode(fidx, args.data() + 1, args.size() - 1);
                     }));
  }
  if (f.kind != FuncInfo::Kind::kVMTIRFunc) {
    backend::ThrowError("TypeError", "'" + f.name + "' is a packed function, not a VM function");
  }
  // Compiled mode: `__vmtir__<name>(ctx, registers, constants, functions)` works on AnyLists;
  // the arguments go into the first registers and the result comes back after them.
  std::string symbol = "__vmtir__" + f.name;
  ffi::Optional<Function> tir;
  ffi::String key(symbol);
  for (const Any& lib : imports_) {
    if ((tir = lib.cast<ffi::Module>()->GetFunction(key, /*query_imports=*/true))) break;
  }
  if (!tir.has_value()) {
    backend::ThrowError("RuntimeError", "Cannot find '" + symbol +
                                            "', the compiled body of VM function '" + f.name +
                                            "', in the executable's kernel library");
  }
  Function body = *tir;
  return VMClosure(f.name, Function::FromPacked([fidx, body](PackedArgs args, Any* rv) {
                     if (args.size() < 1) {
                       backend::ThrowError("TypeError", "a VM closure needs the VM context");
                     }
                     VirtualMachine* vm = FromContext(args[0]);
                     const FuncInfo& f = vm->exec_->func_table[fidx];
                     if (args.size() - 1 != f.num_args) vm->ThrowArity(f, args.size() - 1);
                     if (f.register_file_size < f.num_args + 1) {
                       backend::ThrowError("ValueError", "compiled VM function '" + f.name +
                                                             "' has no register for its result");
                     }
                     std::vector<Any> regs(f.register_file_size);
                     for (int64_t i = 0; i < f.num_args; ++i) regs[i] = args[i + 1];
                     body(vm->context(), static_cast<void*>(regs.data()),
                          static_cast<void*>(vm->const_pool_.data()),
                          static_cast<void*>(vm->func_pool_.data()));
                     *rv = std::move(regs[f.num_args]);
                   }));
}

void VirtualMachine::InitFuncPool() {
  const auto& table = exec_->func_table;
  std::vector<Any> pool(table.size());
  std::vector<PoolEntry> entries(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const FuncInfo& f = table[i];
    if (f.kind == FuncInfo::Kind::kPackedFunc) {
      ffi::Optional<Function> func = FindPackedFunction(f.name);
      if (!func.has_value()) {
        std::string libs;
        for (const Any& lib : imports_) {
          libs += (libs.empty() ? "" : ", ") + std::string(lib.cast<ffi::Module>()->kind());
        }
        std::string advice = MissingFunctionAdvice(f.name);
        backend::ThrowError(
            "RuntimeError",
            "Cannot find function '" + SafeText(f.name) + "' (entry " + std::to_string(i) +
                " of the VM function table). Looked in the executable's kernel library (imports: " +
                (libs.empty() ? std::string("none") : libs) +
                ", searched with their own imports) and then in the global function registry." +
                (advice.empty() ? std::string(" The artifact lacks this kernel: re-export it with "
                                              "apache-tvm 0.27, or register a global function of "
                                              "that name before creating the VirtualMachine.")
                                : advice));
      }
      pool[i] = *func;
      entries[i].kind = PoolEntry::kPacked;
    } else {
      pool[i] = MakeClosure(static_cast<int64_t>(i));
      entries[i].kind =
          f.kind == FuncInfo::Kind::kVMFunc ? PoolEntry::kBytecode : PoolEntry::kClosure;
      entries[i].fidx = static_cast<int64_t>(i);
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].kind == PoolEntry::kPacked) {
      entries[i].packed = pool[i].as<ffi::FunctionObj>();
    }
  }
  func_pool_ = std::move(pool);
  pool_entries_ = std::move(entries);
}

void VirtualMachine::InitInlineCalls() {
  const auto& code = exec_->instructions;
  std::vector<InlineCall> calls(code.size());
  std::vector<MakeShapePlan> plans;
  for (size_t pc = 0; pc < code.size(); ++pc) {
    const Instruction& ins = code[pc];
    if (ins.op != Opcode::kCall || pool_entries_[ins.b].kind != PoolEntry::kPacked) continue;
    InlineOp op = InlineOpOf(pool_entries_[ins.b].packed);
    if (op == InlineOp::kMakeShape) {
      MakeShapePlan plan;
      if (!PlanMakeShape(ins, &plan)) continue;
      calls[pc].plan = static_cast<int32_t>(plans.size());
      plans.push_back(std::move(plan));
    } else if (op == InlineOp::kTupleGetItem && !CanInlineTupleGetItem(ins)) {
      continue;
    }
    calls[pc].op = op;
  }
  inline_calls_ = std::move(calls);
  make_shape_plans_ = std::move(plans);
}

//------------------------------------------------------------------------------------------
// Interpreter
//------------------------------------------------------------------------------------------

bool VirtualMachine::RunInline(const Instruction& ins, const InlineCall& inl, const Any* regs,
                               Any* ret) {
  switch (inl.op) {
    case InlineOp::kNullValue:
      *ret = nullptr;
      return true;
    case InlineOp::kMakeShape:
      return RunMakeShape(make_shape_plans_[inl.plan], regs, ret);
    case InlineOp::kTupleGetItem:
      return RunTupleGetItem(ins, regs, ret);
    case InlineOp::kNone:
      break;
  }
  return false;
}

void VirtualMachine::ThrowArity(const FuncInfo& f, int32_t num_args) const {
  std::string params = f.param_names.empty() ? "" : " (" + JoinNames(f.param_names) + ")";
  backend::ThrowError("TypeError", SafeText("Relax function '" + f.name + "' expects " +
                                            std::to_string(f.num_args) + " arguments" + params +
                                            ", but " + std::to_string(num_args) + " were given"));
}

Any VirtualMachine::InvokeBytecode(int64_t fidx, const AnyView* args, int32_t num_args) {
  const FuncInfo& f = exec_->func_table[fidx];
  if (num_args != f.num_args) ThrowArity(f, num_args);
  FrameGuard guard(this, f);
  Frame* frame = guard.frame();
  Any* regs = frame->regs.data();
  AnyView* call_args = frame->call_args.data();
  for (int32_t i = 0; i < num_args; ++i) regs[i] = args[i];

  const Instruction* code = exec_->instructions.data();
  const Any* consts = const_pool_.data();
  const Any* funcs = func_pool_.data();
  const PoolEntry* entries = pool_entries_.data();
  const InlineCall* inline_calls = inline_calls_.data();
  const AnyView vm_ctx(context());
  int64_t pc = f.start_instr;
  // Operands were validated when the executable was loaded: no checks below.
  while (true) {
    const Instruction& ins = code[pc];
    switch (ins.op) {
      case Opcode::kCall: {
        if (inline_calls[pc].op != InlineOp::kNone && !slow_calls_) {
          Any ret;
          if (RunInline(ins, inline_calls[pc], regs, &ret)) {
            if (ins.a < kBeginSpecialReg) regs[ins.a] = std::move(ret);
            ++pc;
            break;
          }
        }
        AnyView* cargs = call_args + 4;  // room for the instrument prefix
        for (int32_t k = 0; k < ins.num_args; ++k) {
          const Arg& a = ins.args[k];
          switch (a.kind) {
            case ArgKind::kRegister:
              cargs[k] = regs[a.value];
              break;
            case ArgKind::kImmediate:
              cargs[k] = a.value;
              break;
            case ArgKind::kConstIdx:
              cargs[k] = consts[a.value];
              break;
            case ArgKind::kFuncIdx:
              cargs[k] = funcs[a.value];
              break;
            case ArgKind::kVoid:
              cargs[k] = AnyView();
              break;
            case ArgKind::kVMContext:
              cargs[k] = vm_ctx;
              break;
          }
        }
        Any ret;
        if (slow_calls_) {
          RunCallSlow(ins, call_args, &ret);
        } else {
          const PoolEntry& e = entries[ins.b];
          if (e.kind == PoolEntry::kPacked) {
            e.packed->CallPacked(cargs, ins.num_args, &ret);
          } else if (e.kind == PoolEntry::kBytecode) {
            ret = InvokeBytecode(e.fidx, cargs, ins.num_args);
          } else {
            InvokeClosurePacked(funcs[ins.b], cargs, ins.num_args, &ret);
          }
        }
        if (ins.a < kBeginSpecialReg) regs[ins.a] = std::move(ret);
        ++pc;
        break;
      }
      case Opcode::kRet: {
        if (ins.a < kBeginSpecialReg) return std::move(regs[ins.a]);
        if (ins.a == kVMRegister) return Any(context());
        return Any();
      }
      case Opcode::kGoto:
        pc += ins.b;
        break;
      case Opcode::kIf: {
        // A bool or an integer (TypeError for anything else); %void reads as false.
        int64_t cond = ins.a < kBeginSpecialReg ? regs[ins.a].cast<int64_t>() : 0;
        pc += cond != 0 ? 1 : ins.b;
        break;
      }
    }
  }
}

void VirtualMachine::DispatchCall(const Instruction& ins, const AnyView* cargs, Any* ret) {
  const PoolEntry& e = pool_entries_[ins.b];
  if (e.kind == PoolEntry::kPacked) {
    e.packed->CallPacked(cargs, ins.num_args, ret);
  } else if (e.kind == PoolEntry::kBytecode) {
    *ret = InvokeBytecode(e.fidx, cargs, ins.num_args);
  } else {
    InvokeClosurePacked(func_pool_[ins.b], cargs, ins.num_args, ret);
  }
}

void VirtualMachine::RunCallSlow(const Instruction& ins, AnyView* call_args, Any* ret) {
  auto run = [&] {
    if (instrument_.has_value()) {
      RunCallInstrumented(ins, call_args, ret);
    } else {
      DispatchCall(ins, call_args + 4, ret);
    }
  };
  if (profiler_ == nullptr) return run();
  const PoolEntry& e = pool_entries_[ins.b];
  CallProfiler::Category category =
      e.kind == PoolEntry::kPacked ? CallProfiler::CategoryOfPacked(exec_->func_table[ins.b].name)
                                   : CallProfiler::kVMFunction;
  profiler_->Record(ins.b, category, call_args + 4, ins.num_args, run);
}

ffi::Array<Any> VirtualMachine::Profile(const std::string& func_name, PackedArgs args) {
  RequireInitialized();
  std::lock_guard<std::recursive_mutex> lock(run_mu_);
  if (profiler_ != nullptr) {
    backend::ThrowError("RuntimeError",
                        "profile('" + func_name + "') called from inside a profiled run");
  }
  ffi::Optional<Function> func = FunctionOfExecutable(func_name);
  if (!func.has_value()) {
    backend::ThrowError("AttributeError", "the VM has no function '" + func_name + "' to profile");
  }
  // Reset on every exit, so an error in the run leaves the VM on its fast path.
  struct Reset {
    VirtualMachine* vm;
    ~Reset() {
      vm->profiler_.reset();
      vm->slow_calls_ = vm->instrument_.has_value();
    }
  } reset{this};
  // Inputs move to the VM's device first (as set_input does), outside the timed run; with no
  // arguments, the inputs given to set_input are used (apache-tvm's older profile(func_name)).
  std::vector<Any> inputs;
  auto stored = inputs_.find(func_name);
  if (args.size() == 0 && stored != inputs_.end()) {
    inputs = stored->second;
  } else {
    for (int i = 0; i < args.size(); ++i) inputs.push_back(ConvertArgToDevice(args[i]));
  }
  std::vector<AnyView> views(inputs.begin(), inputs.end());
  profiler_ = std::make_unique<CallProfiler>();
  slow_calls_ = true;
  // The run starts and ends with every device idle, so its total is the run's own.
  for (const DLDevice& dev : devices_) CallProfiler::Synchronize(dev);
  int64_t start = profiler_->Now();
  Any rv;
  func.value().CallPacked(views.data(), static_cast<int32_t>(views.size()), &rv);
  for (const DLDevice& dev : devices_) CallProfiler::Synchronize(dev);
  int64_t total = profiler_->Now() - start;
  std::vector<std::string> names;
  names.reserve(exec_->func_table.size());
  for (const FuncInfo& f : exec_->func_table) names.push_back(f.name);
  return profiler_->Report(start, total, names);
}

void VirtualMachine::RunCallInstrumented(const Instruction& ins, AnyView* call_args, Any* ret) {
  // instrument(func, func_symbol, before_run, ret_value, *args) -> optional int (1: skip run)
  AnyView* cargs = call_args + 4;
  const Function& instrument = *instrument_;
  const FuncInfo& callee = exec_->func_table[ins.b];
  ffi::String symbol(callee.name);
  // Python callbacks cannot take a DLDataType: pass dtypes as strings.
  std::vector<ffi::String> dtype_text;
  dtype_text.reserve(ins.num_args);
  std::vector<AnyView> shown(cargs, cargs + ins.num_args);
  for (int32_t k = 0; k < ins.num_args; ++k) {
    if (shown[k].type_index() == ffi::TypeIndex::kTVMFFIDataType) {
      dtype_text.push_back(ffi::DLDataTypeToString(shown[k].cast<DLDataType>()));
      shown[k] = dtype_text.back();
    }
  }
  std::vector<AnyView> iargs(4 + ins.num_args);
  std::copy(shown.begin(), shown.end(), iargs.begin() + 4);
  iargs[0] = func_pool_[ins.b];
  iargs[1] = symbol;
  iargs[2] = true;
  iargs[3] = AnyView();
  Any decision;
  instrument.CallPacked(iargs.data(), static_cast<int32_t>(iargs.size()), &decision);
  auto kind = decision.try_cast<int64_t>();
  if (kind.has_value() && *kind == 1) return;  // kSkipRun
  DispatchCall(ins, cargs, ret);
  iargs[2] = false;
  iargs[3] = *ret;
  instrument.CallPacked(iargs.data(), static_cast<int32_t>(iargs.size()), &decision);
}

ffi::ObjectRef VirtualMachine::GetOrCreateExtension(const std::string& key,
                                                    const Function& factory) {
  std::lock_guard<std::mutex> lock(extensions_mu_);
  auto it = extensions_.find(key);
  if (it != extensions_.end()) return it->second;
  ffi::ObjectRef ext = factory().cast<ffi::ObjectRef>();
  extensions_.emplace(key, ext);
  return ext;
}

void VirtualMachine::InvokeClosurePacked(const AnyView& callee, const AnyView* args,
                                         int32_t num_args, Any* rv) {
  if (const auto* f = callee.as<ffi::FunctionObj>()) {
    f->CallPacked(args, num_args, rv);
    return;
  }
  const auto* clo = callee.as<VMClosureObj>();
  if (clo == nullptr) {
    backend::ThrowError("TypeError",
                        "expected a VM closure or a function to call, got " + callee.GetTypeKey());
  }
  std::vector<AnyView> with_ctx(num_args + 1);
  with_ctx[0] = context();
  std::copy(args, args + num_args, with_ctx.begin() + 1);
  clo->impl.CallPacked(with_ctx.data(), num_args + 1, rv);
}

//------------------------------------------------------------------------------------------
// Stateful interface, saved closures, instrumentation
//------------------------------------------------------------------------------------------

Any VirtualMachine::ConvertArgToDevice(const AnyView& arg) {
  // Like apache-tvm: tensors (and tensors in tuples) move to devices[0]; a raw DLTensor* is
  // always copied into a tensor the VM owns.
  if (auto t = arg.as<ffi::Tensor>()) return TensorOnDevice(*t, devices_[0], allocators_[0]);
  if (const auto* arr = arg.as<ffi::ArrayObj>()) {
    ffi::Array<Any> out;
    out.reserve(arr->size());
    for (const Any& item : *arr) out.push_back(ConvertArgToDevice(item));
    return out;
  }
  if (arg.type_index() == ffi::TypeIndex::kTVMFFIDLTensorPtr) {
    DLTensor* src = arg.cast<DLTensor*>();
    ffi::Tensor dst = allocators_[0]->Empty(ffi::ShapeView(src->shape, src->ndim), src->dtype);
    CopyTensor(src, dst.GetDLTensorPtr(), CopyWait::kFinished);
    return dst;
  }
  return Any(arg);
}

void VirtualMachine::SetInput(const std::string& func_name, bool with_param_module,
                              PackedArgs args) {
  RequireInitialized();
  const FuncInfo& f = exec_->func_table[RequireFunction(func_name)];
  if (args.size() != f.num_args) {
    backend::ThrowError("TypeError", "set_input: '" + func_name + "' takes " +
                                         std::to_string(f.num_args) + " inputs, got " +
                                         std::to_string(args.size()));
  }
  std::vector<Any> inputs(args.size());
  for (int i = 0; i < args.size(); ++i) {
    if (with_param_module && i == args.size() - 1) {
      auto get_params = args[i].cast<ffi::Module>()->GetFunction("get_params");
      if (!get_params.has_value()) {
        backend::ThrowError("AttributeError", "the parameter module has no 'get_params'");
      }
      inputs[i] = (*get_params)();
    } else {
      inputs[i] = ConvertArgToDevice(args[i]);
    }
  }
  inputs_[func_name] = std::move(inputs);
}

void VirtualMachine::InvokeStateful(const std::string& func_name) {
  RequireInitialized();
  int64_t fidx = RequireFunction(func_name);
  auto it = inputs_.find(func_name);
  if (it == inputs_.end()) {
    backend::ThrowError("ValueError", "No inputs set for stateful call of " + func_name +
                                          "; use `set_input` first.");
  }
  std::vector<AnyView> views(it->second.begin(), it->second.end());
  Any out;
  if (pool_entries_[fidx].kind == PoolEntry::kBytecode) {
    out = InvokeBytecode(fidx, views.data(), static_cast<int32_t>(views.size()));
  } else {
    InvokeClosurePacked(func_pool_[fidx], views.data(), static_cast<int32_t>(views.size()), &out);
  }
  outputs_[func_name] = std::move(out);
}

const Any& VirtualMachine::LookupOutput(const std::string& func_name) const {
  auto it = outputs_.find(func_name);
  if (it == outputs_.end()) {
    backend::ThrowError("ValueError", "No output saved for call of \"" + func_name +
                                          "\"; use `invoke_stateful` to call it first.");
  }
  return it->second;
}

ffi::Optional<VMClosure> VirtualMachine::LookupClosure(const std::string& name) {
  auto saved = saved_closures_.find(name);
  if (saved != saved_closures_.end()) return saved->second;
  int64_t fidx = exec_->FindFunction(name);
  if (fidx < 0 || exec_->func_table[fidx].kind == FuncInfo::Kind::kPackedFunc) return std::nullopt;
  if (initialized_) return func_pool_[fidx].cast<VMClosure>();
  return MakeClosure(fidx);
}

void VirtualMachine::SaveFunction(const std::string& func_name, const std::string& saved_name,
                                  bool include_return, PackedArgs args) {
  RequireInitialized();
  ffi::Optional<VMClosure> clo = LookupClosure(func_name);
  if (!clo.has_value()) backend::ThrowError("ValueError", "Unknown function: " + func_name);
  if (exec_->FindFunction(saved_name) >= 0) {
    backend::ThrowError("ValueError", "save_function: '" + saved_name +
                                          "' is a function of the executable and cannot be "
                                          "overridden");
  }
  std::vector<Any> bound(args.size());
  for (int i = 0; i < args.size(); ++i) bound[i] = ConvertArgToDevice(args[i]);
  Function impl = BindLastArgs((*clo)->impl, std::move(bound));
  if (!include_return) {
    impl = Function::FromPacked([impl](PackedArgs a, Any*) {
      Any dropped;
      impl.CallPacked(a, &dropped);
    });
  }
  saved_closures_.erase(saved_name);
  saved_closures_.emplace(saved_name, VMClosure(saved_name, impl));
}

void VirtualMachine::SetInstrument(PackedArgs args) {
  if (args.size() < 1) backend::ThrowError("TypeError", "set_instrument needs a function");
  if (args[0] == nullptr) {
    instrument_ = std::nullopt;
  } else if (auto f = args[0].as<Function>()) {
    instrument_ = *f;
  } else {
    std::string factory_name = args[0].cast<std::string>();
    auto factory = Function::GetGlobal(factory_name);
    if (!factory.has_value()) {
      backend::ThrowError("ValueError",
                          "set_instrument: no global function '" + factory_name + "'");
    }
    Any made;
    factory->CallPacked(args.Slice(1), &made);
    instrument_ = made.cast<Function>();
  }
  slow_calls_ = instrument_.has_value() || profiler_ != nullptr;
}

//------------------------------------------------------------------------------------------
// Module interface
//------------------------------------------------------------------------------------------

// Each entry makes the Function a module method name returns; it holds the VM alive.
struct VirtualMachine::SurfaceMethod {
  const char* name;
  Function (*make)(const ffi::ObjectPtr<VirtualMachine>& self);
};

const VirtualMachine::SurfaceMethod* VirtualMachine::FindSurfaceMethod(const std::string& name) {
  using Self = ffi::ObjectPtr<VirtualMachine>;
  static const SurfaceMethod kSurface[] = {
      {"vm_initialization",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any*) { self->Init(args); });
       }},
      {"invoke_closure",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any* rv) {
           self->RequireInitialized();
           if (args.size() < 1) backend::ThrowError("TypeError", "invoke_closure needs a closure");
           self->InvokeClosurePacked(args[0], args.data() + 1, args.size() - 1, rv);
         });
       }},
      {"invoke_stateful",
       [](const Self& self) {
         return Function::FromTyped(
             [self](const std::string& func_name) { self->InvokeStateful(func_name); });
       }},
      {"set_input",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any*) {
           if (args.size() < 1) backend::ThrowError("TypeError", "set_input needs a function name");
           self->SetInput(args[0].cast<std::string>(), /*with_param_module=*/false, args.Slice(1));
         });
       }},
      {"set_input_with_param_module",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any*) {
           if (args.size() < 1) backend::ThrowError("TypeError", "set_input needs a function name");
           self->SetInput(args[0].cast<std::string>(), /*with_param_module=*/true, args.Slice(1));
         });
       }},
      {"get_output_arity",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any* rv) {
           Any out = IndexNested(self->LookupOutput(args[0].cast<std::string>()), args, 1);
           const auto* arr = out.as<ffi::ArrayObj>();
           *rv = arr != nullptr ? static_cast<int64_t>(arr->size()) : int64_t{-1};
         });
       }},
      {"get_output",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any* rv) {
           Any out = IndexNested(self->LookupOutput(args[0].cast<std::string>()), args, 1);
           if (out.as<ffi::ArrayObj>() != nullptr) {
             backend::ThrowError("ValueError",
                                 "`get_output` cannot return a tuple for RPC compatibility. Please "
                                 "specify another index argument.");
           }
           *rv = std::move(out);
         });
       }},
      {"get_function_arity",
       [](const Self& self) {
         return Function::FromTyped([self](const std::string& func_name) {
           const FuncInfo& f = self->exec_->func_table[self->RequireFunction(func_name)];
           return static_cast<int64_t>(f.param_names.size());
         });
       }},
      {"get_function_param_name",
       [](const Self& self) {
         return Function::FromTyped([self](const std::string& func_name, int64_t index) {
           const FuncInfo& f = self->exec_->func_table[self->RequireFunction(func_name)];
           if (index < 0 || index >= static_cast<int64_t>(f.param_names.size())) {
             backend::ThrowError("ValueError", "Invalid index for " + func_name + " (" +
                                                   std::to_string(index) + " out of " +
                                                   std::to_string(f.param_names.size()) + ")");
           }
           return ffi::String(f.param_names[index]);
         });
       }},
      {"save_function",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any*) {
           if (args.size() < 3) {
             backend::ThrowError("TypeError",
                                 "save_function(func_name, saved_name, include_return, *args)");
           }
           self->SaveFunction(args[0].cast<std::string>(), args[1].cast<std::string>(),
                              args[2].cast<bool>(), args.Slice(3));
         });
       }},
      {"set_instrument",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any*) { self->SetInstrument(args); });
       }},
      {"profile",
       [](const Self& self) {
         return Function::FromPacked([self](PackedArgs args, Any* rv) {
           if (args.size() < 1) backend::ThrowError("TypeError", "profile needs a function name");
           *rv = self->Profile(args[0].cast<std::string>(), args.Slice(1));
         });
       }},
  };
  for (const SurfaceMethod& method : kSurface) {
    if (name == method.name) return &method;
  }
  return nullptr;
}

ffi::Optional<Function> VirtualMachine::FunctionOfExecutable(const std::string& name) {
  ffi::ObjectPtr<VirtualMachine> self = ffi::GetObjectPtr<VirtualMachine>(this);
  // A closure saved by save_function (never named like a function of the executable), else a
  // VM function of the executable.
  auto saved = saved_closures_.find(name);
  if (saved != saved_closures_.end()) {
    VMClosure clo = saved->second;
    return Function::FromPacked([self, clo](PackedArgs args, Any* rv) {
      self->RequireInitialized();
      self->InvokeClosurePacked(clo, args.data(), args.size(), rv);
    });
  }
  int64_t fidx = exec_->FindFunction(name);
  if (fidx < 0) return std::nullopt;
  const FuncInfo& f = exec_->func_table[fidx];
  if (f.kind == FuncInfo::Kind::kVMFunc) {
    return Function::FromPacked([self, fidx](PackedArgs args, Any* rv) {
      self->RequireInitialized();
      *rv = self->InvokeBytecode(fidx, args.data(), args.size());
    });
  }
  if (f.kind == FuncInfo::Kind::kVMTIRFunc) {
    return Function::FromPacked([self, fidx](PackedArgs args, Any* rv) {
      self->RequireInitialized();
      self->InvokeClosurePacked(self->func_pool_[fidx], args.data(), args.size(), rv);
    });
  }
  return std::nullopt;
}

ffi::Optional<Function> VirtualMachine::GetFunction(const ffi::String& name) {
  std::string key(name);
  if (const SurfaceMethod* method = FindSurfaceMethod(key)) {
    return method->make(ffi::GetObjectPtr<VirtualMachine>(this));
  }
  return FunctionOfExecutable(key);
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
