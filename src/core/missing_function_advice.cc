#include "missing_function_advice.h"

#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "wheel_owners.h"

namespace tvm_runtime {
namespace core {
namespace {

struct Unprovided {
  const char* pattern;  // an exact name, or a family when it ends with '*'
  const char* why;
};

// apache-tvm 0.27's runtime functions that tvm-runtime does not provide, with the reason: the
// `not-applicable` globals of tests/artifacts/surface/classification.toml, word for word (but
// those registered to fail with their reason, and those a wheel owns, whose advice names it);
// tests/core/test_runtime_surface.py compares the two.
constexpr Unprovided kUnprovided[] = {
    {"runtime.timer.cpu",
     "apache-tvm's C++ Timer object for the CPU; tvm-runtime times CPU rounds on the host clock "
     "directly, and its runtime.timer.<device> hooks (GPU backends) have their own type"},
    {"runtime.ModuleLoadStaticLibrary",
     "static-library modules only exist to be linked into another export_library call, which "
     "needs apache-tvm's compiler"},
    {"runtime.get_cuda_stream",
     "apache-tvm's CUDA runtime internals: tvm-runtime-cuda answers the same questions through "
     "tvm.cuda(i) (exist, attributes, streams); there is no DeviceAPI C++ object to hand out"},
    {"runtime.GetCudaDeviceCount",
     "apache-tvm's CUDA runtime internals: tvm-runtime-cuda answers the same questions through "
     "tvm.cuda(i) (exist, attributes, streams); there is no DeviceAPI C++ object to hand out"},
    {"runtime.GetCudaFreeMemory",
     "apache-tvm's CUDA runtime internals: tvm-runtime-cuda answers the same questions through "
     "tvm.cuda(i) (exist, attributes, streams); there is no DeviceAPI C++ object to hand out"},
    {"device_api.cuda*",
     "apache-tvm's CUDA runtime internals: tvm-runtime-cuda answers the same questions through "
     "tvm.cuda(i) (exist, attributes, streams); there is no DeviceAPI C++ object to hand out"},
    {"device_api.cpu",
     "returns a pointer to apache-tvm's C++ DeviceAPI object, which only C++ linked against "
     "apache-tvm's libtvm_runtime can use; tvm-runtime's devices are the tables of "
     "TVMRuntimeGetDeviceAPI (c_api.h), and tvm.runtime.enabled / Device.exist answer what "
     "scripts ask"},
    {"device_api.rpc",
     "returns a pointer to apache-tvm's C++ DeviceAPI object, which only C++ linked against "
     "apache-tvm's libtvm_runtime can use; tvm-runtime's devices are the tables of "
     "TVMRuntimeGetDeviceAPI (c_api.h), and tvm.runtime.enabled / Device.exist answer what "
     "scripts ask"},
    {"rpc.*",
     "the C++ entry points of apache-tvm's RPC implementation; tvm-runtime's RPC client, server, "
     "tracker and proxy are Python (tvm.rpc), speak the same protocol and are reached through "
     "tvm.rpc's API (connect, connect_tracker, Server, LocalSession, ...)"},
    {"tvm.rpc.TensorFromRemoteOpaqueHandle",
     "the C++ entry points of apache-tvm's RPC implementation; tvm-runtime's RPC client, server, "
     "tracker and proxy are Python (tvm.rpc), speak the same protocol and are reached through "
     "tvm.rpc's API (connect, connect_tracker, Server, LocalSession, ...)"},
};

// Name prefixes apache-tvm 0.27's runtime registers its functions under: a missing name with
// one of them is a runtime function, never one of the artifact's kernels.
constexpr const char* kRuntimePrefixes[] = {
    "vm.builtin.", "relax.run.", "runtime.", "tvm.runtime.", "tvm.contrib.",
    "device_api.", "ffi.",       "rpc.",     "tvm.rpc.",     "__tvm_",
};

/* Whether a distribution is loaded: it registered one of its other declared functions. */
bool DistributionLoaded(const std::string& dist, const std::string& missing) {
  std::vector<::tvm::ffi::String> names;
  for (const FunctionOwner* owner = FunctionOwners(); owner->pattern != nullptr; ++owner) {
    if (dist != owner->distribution) continue;
    std::string pattern(owner->pattern);
    if (pattern.back() != '*') {
      if (pattern != missing && ::tvm::ffi::Function::GetGlobal(pattern).has_value()) return true;
      continue;
    }
    if (names.empty()) names = ::tvm::ffi::Function::ListGlobalNames();
    for (const ::tvm::ffi::String& name : names) {
      if (PatternMatches(owner->pattern, std::string(name))) return true;
    }
  }
  return false;
}

/* What the Python side knows of `dist` (kDistributionStatusGlobal), or "" without it. */
std::string DistributionStatus(const std::string& dist) {
  auto status = ::tvm::ffi::Function::GetGlobal(kDistributionStatusGlobal);
  if (!status.has_value()) return std::string();
  try {
    return (*status)(dist).cast<::tvm::ffi::String>();
  } catch (const std::exception&) {
    return std::string();
  }
}

std::string WheelAdvice(const std::string& dist, const std::string& name) {
  std::string state = DistributionStatus(dist);
  if (state == "not installed") {
    return " It is provided by " + dist + ", which is not installed: pip install " + dist + ".";
  }
  bool loaded = state.rfind("loaded", 0) == 0;
  if (loaded || (state.empty() && DistributionLoaded(dist, name))) {
    std::string version = loaded ? state.substr(std::strlen("loaded")) : std::string();
    if (!version.empty()) version = " (" + version.substr(1) + ")";
    return " It belongs to " + dist +
           ", which is installed and loaded but does not register it: this version of " + dist +
           version + " lacks the function (upgrade it: pip install -U " + dist +
           "; `python -m tvm.backend` shows the versions).";
  }
  if (!state.empty()) {
    return " It is provided by " + dist + ", which is installed but not loaded (" + state +
           "): `python -m tvm.backend` shows the fix.";
  }
  return " It is provided by " + dist + ", which is not installed or failed to load: pip install " +
         dist + " (`python -m tvm.backend` shows its status).";
}

}  // namespace

std::string MissingFunctionAdvice(const std::string& name) {
  std::string dist = DistributionForFunction(name);
  if (!dist.empty()) return WheelAdvice(dist, name);
  for (const Unprovided& entry : kUnprovided) {
    if (PatternMatches(entry.pattern, name)) {
      return " '" + name +
             "' is a runtime function of apache-tvm 0.27 that tvm-runtime does not provide: " +
             entry.why + ". It is not part of the artifact, so re-exporting does not help.";
    }
  }
  for (const char* prefix : kRuntimePrefixes) {
    if (PatternMatches((std::string(prefix) + "*").c_str(), name)) {
      return " '" + name +
             "' is a runtime function (apache-tvm's runtime registers its functions under this "
             "name), not part of the artifact, and this version of tvm-runtime does not provide "
             "it, so re-exporting does not help: run the model on apache-tvm's runtime, or "
             "register a global function of that name before creating the VirtualMachine.";
    }
  }
  if (name.find('.') != std::string::npos) {
    return " No kernel of the artifact has this name either: a dotted name like this is "
           "usually a function the model expects the application to register "
           "(R.call_dps_packed / R.call_pure_packed): register it with "
           "tvm.register_global_func before creating the VirtualMachine.";
  }
  return std::string();
}

}  // namespace core
}  // namespace tvm_runtime
