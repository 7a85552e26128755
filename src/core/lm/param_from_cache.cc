/*
 * Parameter lists taken from the tensor cache (apache-tvm 0.27 names and signatures), what a
 * deploy script or serving engine passes as a model's weights:
 *   vm.builtin.param_array_from_cache(String prefix, int n) -> Array<Tensor>
 *       entries "<prefix>_0" .. "<prefix>_<n-1>"; n == -1: as many as are consecutive
 *   vm.builtin.param_array_from_cache_by_name(Array<String> names) -> Array<Tensor>
 *   vm.builtin.param_array_from_cache_by_name_unpacked(String name, ...) -> Array<Tensor>
 *   vm.builtin.param_module_from_cache(String prefix, int n) -> Module
 *   vm.builtin.param_module_from_cache_by_name(Array<String> names) -> Module
 *       a module of kind "param_module" whose "get_params" returns that array (how an RPC client
 *       gets hold of weights already loaded on the remote side)
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <string>
#include <utility>

#include "../ffi_names.h"
#include "lm_init.h"
#include "tensor_cache.h"

namespace tvm_runtime {
namespace core {
namespace lm {
namespace {

using TensorArray = ffi::Array<ffi::Tensor>;

[[noreturn]] void NotInCache(const std::string& name) {
  backend::ThrowError("ValueError",
                      "cannot find parameter '" + name + "' in the tensor cache (" +
                          std::to_string(TensorCacheSize()) +
                          " entries); load the model's weights first with "
                          "vm.builtin.tensor_cache.load(dir, device_type, device_id)");
}

TensorArray ParamsByPrefix(const ffi::String& prefix, int64_t count) {
  if (count < -1) {
    backend::ThrowError("ValueError",
                        "param_array_from_cache: the count must be >= 0 or -1 (all), "
                        "got " +
                            std::to_string(count));
  }
  TensorArray params;
  for (int64_t i = 0; count == -1 || i < count; ++i) {
    std::string name = std::string(prefix) + "_" + std::to_string(i);
    ffi::Optional<ffi::Tensor> t = TensorCacheGet(name);
    if (!t.has_value()) {
      if (count == -1) break;
      NotInCache(name);
    }
    params.push_back(*t);
  }
  return params;
}

TensorArray ParamsByName(const ffi::Array<ffi::String>& names) {
  TensorArray params;
  params.reserve(names.size());
  for (const ffi::String& name : names) {
    ffi::Optional<ffi::Tensor> t = TensorCacheGet(std::string(name));
    if (!t.has_value()) NotInCache(std::string(name));
    params.push_back(*t);
  }
  return params;
}

class ParamModule : public ffi::ModuleObj {
 public:
  explicit ParamModule(TensorArray params) : params_(std::move(params)) {}

  const char* kind() const final { return "param_module"; }

  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    if (name != "get_params") return std::nullopt;
    TensorArray params = params_;
    return ffi::Function::FromTyped([params]() { return params; });
  }

 private:
  TensorArray params_;
};

ffi::Module MakeParamModule(TensorArray params) {
  return ffi::Module(ffi::make_object<ParamModule>(std::move(params)));
}

void ParamsByNameUnpacked(PackedArgs args, Any* rv) {
  ffi::Array<ffi::String> names;
  names.reserve(args.size());
  for (int i = 0; i < args.size(); ++i) {
    auto name = args[i].try_cast<ffi::String>();
    if (!name.has_value()) {
      backend::ThrowError("TypeError",
                          "vm.builtin.param_array_from_cache_by_name_unpacked: argument " +
                              std::to_string(i) + " must be a parameter name (string), got " +
                              args[i].GetTypeKey());
    }
    names.push_back(*name);
  }
  *rv = ParamsByName(names);
}

}  // namespace

void RegisterParamCacheBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("vm.builtin.param_array_from_cache", ParamsByPrefix)
      .def("vm.builtin.param_array_from_cache_by_name", ParamsByName)
      .def_packed("vm.builtin.param_array_from_cache_by_name_unpacked", ParamsByNameUnpacked)
      .def("vm.builtin.param_module_from_cache",
           [](const ffi::String& prefix, int64_t count) {
             return MakeParamModule(ParamsByPrefix(prefix, count));
           })
      .def("vm.builtin.param_module_from_cache_by_name", [](const ffi::Array<ffi::String>& names) {
        return MakeParamModule(ParamsByName(names));
      });
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
