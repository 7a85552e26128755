/*
 * Shared skeleton of GPU device modules (kinds "opencl", "cuda", "vulkan", ...) loaded from the
 * `__tvm_ffi__library_bin` of an apache-tvm 0.27 artifact.
 *
 * DeviceModuleBase keeps the parsed function table and the original payload (so the module can
 * be serialized again unchanged), answers GetFunction only for kernels in the table, and turns a
 * backend's launcher into a packed ffi::Function.  KernelSignature precomputes, once per kernel,
 * everything the launch path needs to interpret the packed arguments TVM host code passes:
 *   [kernel params per arg_types] [one int per launch tag] [dyn smem bytes, if tagged]
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_DEVICE_MODULE_H_
#define TVM_RUNTIME_BACKEND_GPU_DEVICE_MODULE_H_

#include <tvm/ffi/cast.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/function_info.h>
#include <tvm_runtime/backend/gpu/kernel_args.h>
#include <tvm_runtime/backend/gpu/launch_params.h>

#include <string>
#include <utility>

namespace tvm_runtime {
namespace backend {

struct KernelSignature {
  std::string name;
  KernelArgs args;
  LaunchPlan plan;

  /* Throws TypeError/ValueError for argument types or launch tags this runtime cannot serve. */
  explicit KernelSignature(const FunctionInfo& info)
      : name(info.name),
        args(info.arg_types, info.name),
        plan(info.arg_types.size(), info.launch_param_tags, info.name) {}

  void CheckArity(int32_t num_args) const {
    if (static_cast<size_t>(num_args) != plan.num_packed_args()) ThrowArity(num_args);
  }

 private:
  [[noreturn]] void ThrowArity(int32_t num_args) const {
    ThrowError("TypeError",
               "kernel '" + name + "' expects " + std::to_string(plan.num_packed_args()) +
                   " packed arguments (" + std::to_string(plan.num_kernel_args()) +
                   " kernel parameters + launch dimensions), got " + std::to_string(num_args));
  }
};

class DeviceModuleBase : public ::tvm::ffi::ModuleObj {
 public:
  DeviceModuleBase(std::string kind, std::string payload, DeviceModuleHeader header)
      : kind_(std::move(kind)), payload_(std::move(payload)), header_(std::move(header)) {}

  const char* kind() const final { return kind_.c_str(); }

  int GetPropertyMask() const override {
    return ::tvm::ffi::Module::kBinarySerializable | ::tvm::ffi::Module::kRunnable;
  }

  ::tvm::ffi::Optional<::tvm::ffi::Function> GetFunction(const ::tvm::ffi::String& name) final {
    auto it = header_.fmap.find(std::string(name));
    if (it == header_.fmap.end()) return GetModuleFunction(std::string(name));
    return MakeKernelFunction(it->first, it->second);
  }

  /* The payload exactly as loaded: `ffi.Module.load_from_bytes.<kind>` reads it back. */
  ::tvm::ffi::Bytes SaveToBytes() const override { return ::tvm::ffi::Bytes(payload_); }

  const DeviceModuleHeader& header() const { return header_; }

 protected:
  /* Called by GetFunction for a kernel of the table (`name` is its key there); host code
   * caches the result. */
  virtual ::tvm::ffi::Function MakeKernelFunction(const std::string& name,
                                                  const FunctionInfo& info) = 0;

  /* Functions of the module itself, outside the kernel table (apache-tvm's
   * "opencl.GetPreCompiledPrograms", ...); none by default. */
  virtual ::tvm::ffi::Optional<::tvm::ffi::Function> GetModuleFunction(const std::string& name) {
    return std::nullopt;
  }

  /* Wraps `launcher`, callable as `launcher(const TVMFFIAny* args, int32_t num_args)`, into a
   * packed function.  The function holds a reference to this module, so the per-device state
   * the launcher points into lives as long as any host code can still call it. */
  template <typename Launcher>
  ::tvm::ffi::Function WrapLauncher(Launcher launcher) {
    struct Packed {
      ::tvm::ffi::ObjectPtr<::tvm::ffi::Object> owner;
      Launcher launcher;
      void operator()(const ::tvm::ffi::AnyView* args, int32_t num_args,
                      ::tvm::ffi::Any* /*result*/) const {
        // AnyView is layout-identical to TVMFFIAny; launchers work on the C view.
        launcher(reinterpret_cast<const TVMFFIAny*>(args), num_args);
      }
    };
    return ::tvm::ffi::Function::FromPacked(
        Packed{::tvm::ffi::GetObjectPtr<::tvm::ffi::Object>(this), std::move(launcher)});
  }

 private:
  std::string kind_;
  std::string payload_;
  DeviceModuleHeader header_;
};

/* Registers `ffi.Module.load_from_bytes.<kind>` with `load(const std::string& payload) ->
 * ffi::Module`.  It overrides the core's placeholder that asks the user to install the backend;
 * call it from the backend's registration function, never from a static constructor. */
template <typename Load>
void RegisterModuleLoader(const std::string& kind, Load load) {
  SetGlobalFunction("ffi.Module.load_from_bytes." + kind, [load](const ::tvm::ffi::Bytes& payload) {
    return load(std::string(payload.data(), payload.size()));
  });
}

/* `module` as the `M` this backend loaded, for the backend's describe globals; TypeError
 * "expected a module loaded by <wheel>, got kind '<kind>'" for any other module. */
template <typename M>
const M& ModuleLoadedBy(const ::tvm::ffi::Module& module, const char* wheel) {
  const auto* loaded = dynamic_cast<const M*>(module.operator->());
  if (loaded == nullptr) {
    ThrowError("TypeError", std::string("expected a module loaded by ") + wheel + ", got kind '" +
                                module->kind() + "'");
  }
  return *loaded;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_DEVICE_MODULE_H_
