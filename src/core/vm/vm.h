/*
 * The Relax VM interpreter: an ffi::ModuleObj (kind "relax.VirtualMachine") made by an
 * executable's `vm_load_executable`, with apache-tvm 0.27's module functions:
 *
 *   vm_initialization(dev_type, dev_id, alloc_type, ...)   triplets; the last device is the host
 *   invoke_closure(closure_or_func, *args)
 *   invoke_stateful(func_name)         runs func_name on the inputs given to set_input
 *   set_input(func_name, *args)        inputs are copied to devices[0] when they live elsewhere
 *   set_input_with_param_module(func_name, *args, param_module)
 *   get_output_arity(func_name, *idx) / get_output(func_name, *idx)
 *   get_function_arity(func_name) / get_function_param_name(func_name, i)
 *   save_function(func_name, saved_name, include_return, *args)
 *   set_instrument(func | factory_name, *factory_args)
 *   profile(func_name, *args)          runs func_name once timing every call (call_profiler.h)
 *   <any VM function name>             a function that runs it (what vm["main"] returns)
 *
 * Calling convention: VM functions (closures) are called as impl(vm_ctx, *args) where vm_ctx is
 * this object as a `void*`; builtins that take the context (alloc_storage, alloc_shape_heap,
 * invoke_closure, ...) recover the VM with VirtualMachine::FromContext.
 */
#ifndef TVM_RUNTIME_CORE_VM_VM_H_
#define TVM_RUNTIME_CORE_VM_VM_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/string.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocators.h"
#include "call_profiler.h"
#include "executable.h"
#include "inline_builtins.h"

namespace tvm_runtime {
namespace core {
namespace vm {

/* A callable VM value: a VM function, or one with some trailing arguments bound. `impl` takes
 * the VM context pointer first. */
class VMClosureObj : public ::tvm::ffi::Object {
 public:
  ::tvm::ffi::String func_name;
  ::tvm::ffi::Function impl;

  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("relax.vm.Closure", VMClosureObj, ::tvm::ffi::Object);
};

class VMClosure : public ::tvm::ffi::ObjectRef {
 public:
  VMClosure(::tvm::ffi::String func_name, ::tvm::ffi::Function impl);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(VMClosure, ::tvm::ffi::ObjectRef, VMClosureObj);
};

/* `func` with `last_args` appended to every call's arguments. */
::tvm::ffi::Function BindLastArgs(::tvm::ffi::Function func,
                                  std::vector<::tvm::ffi::Any> last_args);

class VirtualMachine : public ::tvm::ffi::ModuleObj {
 public:
  explicit VirtualMachine(::tvm::ffi::ObjectPtr<VMExecutable> exec);

  const char* kind() const final { return "relax.VirtualMachine"; }
  int GetPropertyMask() const final { return ::tvm::ffi::Module::kRunnable; }
  ::tvm::ffi::Optional<::tvm::ffi::Function> GetFunction(const ::tvm::ffi::String& name) final;

  /* The VM behind a context pointer passed to a builtin; TypeError if it is not one. */
  static VirtualMachine* FromContext(const ::tvm::ffi::AnyView& ctx);

  void* context() { return static_cast<void*>(this); }
  size_t num_devices() const { return devices_.size(); }
  DLDevice device(size_t i) const { return devices_[i]; }
  Allocator* allocator(size_t i) const { return allocators_[i]; }
  /* Index of the host device: the last one, by convention. */
  size_t host_index() const { return devices_.size() - 1; }

  /* Calls a Function directly, or a VMClosure with this VM's context prepended. */
  void InvokeClosurePacked(const ::tvm::ffi::AnyView& callee, const ::tvm::ffi::AnyView* args,
                           int32_t num_args, ::tvm::ffi::Any* rv);

  /* Runs VM function `fidx` (a VMFunc) on `args`. */
  ::tvm::ffi::Any InvokeBytecode(int64_t fidx, const ::tvm::ffi::AnyView* args, int32_t num_args);

  /* Per-VM state of a builtin (backend/vm_extension.h): the object kept under `key`, made by
   * `factory()` on the first request and released with this VM. */
  ::tvm::ffi::ObjectRef GetOrCreateExtension(const std::string& key,
                                             const ::tvm::ffi::Function& factory);

 private:
  struct Frame {
    std::vector<::tvm::ffi::Any> regs;
    std::vector<::tvm::ffi::AnyView> call_args;
  };
  class FrameGuard;

  // How a func_pool entry is called from a Call instruction.
  struct PoolEntry {
    enum Kind : uint8_t { kPacked, kBytecode, kClosure };
    Kind kind = kClosure;
    const ::tvm::ffi::FunctionObj* packed = nullptr;  // kPacked: borrowed from func_pool_
    int64_t fidx = -1;                                // kBytecode
  };

  void Init(::tvm::ffi::PackedArgs args);
  void InitFuncPool();
  void InitInlineCalls();  // after InitFuncPool: which call instructions run inline
  void RequireInitialized() const;
  ::tvm::ffi::Optional<::tvm::ffi::Function> FindPackedFunction(const std::string& name) const;
  VMClosure MakeClosure(int64_t fidx);
  ::tvm::ffi::Optional<VMClosure> LookupClosure(const std::string& name);
  int64_t RequireFunction(const std::string& name) const;

  // A Call instruction's callee on prepared arguments (`cargs`), without instrument or profiler.
  // A Call instruction run inline (fast path only); false when the ordinary call must run.
  bool RunInline(const Instruction& ins, const InlineCall& inl, const ::tvm::ffi::Any* regs,
                 ::tvm::ffi::Any* ret);
  void DispatchCall(const Instruction& ins, const ::tvm::ffi::AnyView* cargs, ::tvm::ffi::Any* ret);
  // The slow path of a Call instruction, taken while an instrument or the profiler is set.
  void RunCallSlow(const Instruction& ins, ::tvm::ffi::AnyView* call_args, ::tvm::ffi::Any* ret);
  void RunCallInstrumented(const Instruction& ins, ::tvm::ffi::AnyView* call_args,
                           ::tvm::ffi::Any* ret);
  ::tvm::ffi::Array<::tvm::ffi::Any> Profile(const std::string& func_name,
                                             ::tvm::ffi::PackedArgs args);
  [[noreturn]] void ThrowArity(const FuncInfo& f, int32_t num_args) const;

  ::tvm::ffi::Any ConvertArgToDevice(const ::tvm::ffi::AnyView& arg);
  void SetInput(const std::string& func_name, bool with_param_module, ::tvm::ffi::PackedArgs args);
  void InvokeStateful(const std::string& func_name);
  const ::tvm::ffi::Any& LookupOutput(const std::string& func_name) const;
  void SaveFunction(const std::string& func_name, const std::string& saved_name,
                    bool include_return, ::tvm::ffi::PackedArgs args);
  void SetInstrument(::tvm::ffi::PackedArgs args);

  // The module's surface: one entry per method name of apache-tvm 0.27's VM module (vm.cc), and
  // the VM functions themselves (what vm["main"] returns).
  struct SurfaceMethod;
  static const SurfaceMethod* FindSurfaceMethod(const std::string& name);
  ::tvm::ffi::Optional<::tvm::ffi::Function> FunctionOfExecutable(const std::string& name);

  static constexpr uint64_t kContextMagic = 0x52656c6178564d31ULL;  // "RelaxVM1"
  uint64_t context_magic_ = kContextMagic;

  ::tvm::ffi::ObjectPtr<VMExecutable> exec_;
  bool initialized_ = false;
  std::vector<DLDevice> devices_;
  std::vector<Allocator*> allocators_;
  // Contiguous Any arrays: compiled-mode (VMTIRFunc) code reads them as AnyLists.
  std::vector<::tvm::ffi::Any> const_pool_;
  std::vector<::tvm::ffi::Any> func_pool_;
  std::vector<PoolEntry> pool_entries_;
  // Per instruction of the executable: its inline form on the fast path (inline_builtins.h).
  std::vector<InlineCall> inline_calls_;
  std::vector<MakeShapePlan> make_shape_plans_;

  std::recursive_mutex run_mu_;  // one call stack at a time (see FrameGuard)
  std::vector<std::unique_ptr<Frame>> frames_;
  size_t depth_ = 0;

  std::unordered_map<std::string, std::vector<::tvm::ffi::Any>> inputs_;
  std::unordered_map<std::string, ::tvm::ffi::Any> outputs_;
  std::unordered_map<std::string, VMClosure> saved_closures_;
  ::tvm::ffi::Optional<::tvm::ffi::Function> instrument_;
  std::unique_ptr<CallProfiler> profiler_;  // set only during profile()
  bool slow_calls_ = false;                 // instrument_ or profiler_ is set

  // Last, so released first: a builtin's state (e.g. captured CUDA graphs and the tensors they
  // write) goes before anything else of the VM.
  std::mutex extensions_mu_;
  std::unordered_map<std::string, ::tvm::ffi::ObjectRef> extensions_;
};

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_VM_H_
