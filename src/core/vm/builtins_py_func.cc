/*
 * The registry of Python functions that Relax's `R.call_py_func` calls back into (apache-tvm 0.27
 * names and signatures; a BasePyModule registers its methods here before running):
 *   vm.builtin.register_py_func(String name, Function f)
 *   vm.builtin.get_py_func(String name) -> Function
 *   vm.builtin.call_py_func((String name, Array args)) -> f(*args)
 *   vm.builtin.clear_py_func_registry()
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../ffi_names.h"
#include "vm_init.h"

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

struct PyFuncRegistry {
  std::mutex mutex;
  std::unordered_map<std::string, ffi::Function> funcs;
};

// Never destroyed: the functions are Python callables, which must not be released after the
// interpreter has shut down.
PyFuncRegistry& PyFuncs() {
  static PyFuncRegistry* registry = new PyFuncRegistry();
  return *registry;
}

ffi::Function GetPyFunc(const ffi::String& name) {
  PyFuncRegistry& r = PyFuncs();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.funcs.find(std::string(name));
  if (it == r.funcs.end()) {
    backend::ThrowError("KeyError", "Python function '" + std::string(name) +
                                        "' is not registered: register it with "
                                        "vm.builtin.register_py_func (a relax BasePyModule does "
                                        "this for its methods) before running the model");
  }
  return it->second;
}

void CallPyFunc(PackedArgs args, Any* rv) {
  const char* who = "vm.builtin.call_py_func";
  auto call = args.size() == 1 ? args[0].try_cast<ffi::Array<Any>>() : std::nullopt;
  if (!call.has_value() || call->size() != 2) {
    backend::ThrowError("TypeError",
                        std::string(who) + " expects one argument, the tuple (name, args)");
  }
  auto name = (*call)[0].try_cast<ffi::String>();
  auto call_args = (*call)[1].try_cast<ffi::Array<Any>>();
  if (!name.has_value() || !call_args.has_value()) {
    backend::ThrowError("TypeError",
                        std::string(who) + ": the tuple must be (str name, tuple args)");
  }
  ffi::Function f = GetPyFunc(*name);
  std::vector<AnyView> views(call_args->begin(), call_args->end());
  f.CallPacked(ffi::PackedArgs(views.data(), static_cast<int>(views.size())), rv);
}

}  // namespace

void RegisterPyFuncBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("vm.builtin.register_py_func",
           [](const ffi::String& name, ffi::Function f) {
             PyFuncRegistry& r = PyFuncs();
             std::lock_guard<std::mutex> lock(r.mutex);
             r.funcs[std::string(name)] = std::move(f);
           })
      .def("vm.builtin.get_py_func", GetPyFunc)
      .def_packed("vm.builtin.call_py_func", CallPyFunc)
      .def("vm.builtin.clear_py_func_registry", [] {
        std::unordered_map<std::string, ffi::Function> old;
        {
          PyFuncRegistry& r = PyFuncs();
          std::lock_guard<std::mutex> lock(r.mutex);
          old.swap(r.funcs);
        }
      });
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
