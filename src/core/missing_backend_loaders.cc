/*
 * Placeholder module loaders for device-module kinds whose backend is a separate wheel.
 *
 * Without them, loading an OpenCL artifact with only the core installed fails deep inside
 * tvm-ffi with "a loader of that name is not registered".  One library may hold host code and
 * device modules for several backends (a multi-target build), so a missing backend must not
 * stop the rest from running: the placeholder loads the payload into a stand-in module that
 * answers exactly the kernels of its function table, and each of them fails *when called*,
 * naming the wheel to install (or why the installed one failed to load).  A backend replaces
 * its placeholder with the real loader when it registers.  The kinds come from the backends'
 * declarations (wheel_owners.h), plus the kinds apache-tvm emits that no wheel serves, each
 * with the reason.
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/function_info.h>

#include <string>
#include <utility>
#include <vector>

#include "backend_loader.h"
#include "core_init.h"
#include "device_registry.h"
#include "wheel_owners.h"

namespace tvm_runtime {
namespace core {
namespace {

// Module kinds apache-tvm 0.27 can embed in an artifact that no tvm-runtime wheel declares, and
// why they cannot run (the text of tests/artifacts/surface/classification.toml for the loaders).
struct UnservedKind {
  const char* kind;
  const char* why;
};
constexpr UnservedKind kUnservedKinds[] = {
    {"c",
     "a C source module is source code, not something a runtime runs; tvm-runtime does not keep "
     "it (export the library compiled)"},
    {"static_library",
     "static-library modules only exist to be linked into another export_library call, which "
     "needs apache-tvm's compiler"},
};
// Kinds whose payload starts with the function table itself, without the `str fmt` field.
constexpr const char* kKindsWithoutFmt[] = {"webgpu"};

/* Why modules of `kind` cannot run here, after `lead` (what was attempted); `why` is the reason
 * for a kind no wheel serves (device_type 0). */
[[noreturn]] void ThrowMissing(const std::string& lead, const std::string& kind, int device_type,
                               const std::string& why) {
  if (device_type == 0) backend::ThrowError("RuntimeError", lead + why + ".");
  try {
    RequireDevice(device_type);
  } catch (const ::tvm::ffi::Error& err) {
    backend::ThrowError("RuntimeError", lead + err.message());
  }
  backend::ThrowError("RuntimeError",
                      lead + "the " + DeviceTypeName(device_type) +
                          " backend is loaded but registered no loader for it; reinstall " +
                          DistributionForDevice(device_type));
}

/* The stand-in for a device module whose backend is absent.  It keeps the payload, so exporting
 * the loaded library again writes it back unchanged. */
class MissingBackendModule : public backend::DeviceModuleBase {
 public:
  MissingBackendModule(std::string kind, int device_type, std::string why, std::string payload,
                       backend::DeviceModuleHeader header)
      : DeviceModuleBase(kind, std::move(payload), std::move(header)),
        device_type_(device_type),
        why_(std::move(why)) {}

 protected:
  ::tvm::ffi::Function MakeKernelFunction(const std::string& name,
                                          const backend::FunctionInfo&) override {
    std::string lead =
        "Cannot run kernel '" + name + "' of this artifact's '" + kind() + "' device module: ";
    std::string module_kind = kind();
    int device_type = device_type_;
    std::string why = why_;
    return ::tvm::ffi::Function::FromPacked(
        [lead, module_kind, device_type, why](::tvm::ffi::PackedArgs, ::tvm::ffi::Any*) {
          ThrowMissing(lead, module_kind, device_type, why);
        });
  }

 private:
  int device_type_;
  std::string why_;
};

bool HasFmtField(const std::string& kind) {
  for (const char* k : kKindsWithoutFmt) {
    if (kind == k) return false;
  }
  return true;
}

::tvm::ffi::Module LoadStandIn(const std::string& kind, int device_type, const std::string& why,
                               const ::tvm::ffi::Bytes& bytes) {
  std::string payload(bytes.data(), bytes.size());
  backend::DeviceModuleHeader header;
  try {
    backend::BlobReader reader(payload.data(), payload.size(), "'" + kind + "' module");
    if (HasFmtField(kind)) {
      header = backend::ReadDeviceModuleHeader(&reader);
    } else {
      uint64_t n = reader.ReadCount(/*min bytes per entry=*/8, "the function table");
      for (uint64_t i = 0; i < n; ++i) {
        std::string key = reader.ReadString();
        header.fmap[key] = backend::ReadFunctionInfo(&reader);
      }
    }
  } catch (const ::tvm::ffi::Error&) {
    // Not the layout we know: there is no kernel list to defer to, so say what is missing now.
    ThrowMissing("Cannot load the '" + kind + "' module embedded in this artifact: ", kind,
                 device_type, why);
  }
  auto module = ::tvm::ffi::make_object<MissingBackendModule>(
      kind, device_type, why, std::move(payload), std::move(header));
  return ::tvm::ffi::Module(module);
}

/* After the backend of a placeholder's kind was just loaded: its own loader, which replaced the
 * placeholder when the backend registered.  A backend that registered none is reported as such
 * (never the placeholder again, which would recurse). */
// The placeholders registered here, held for the process so that their addresses stay theirs.
std::vector<::tvm::ffi::Function>& Placeholders() {
  static auto* placeholders = new std::vector<::tvm::ffi::Function>();  // written at init only
  return *placeholders;
}

bool IsPlaceholder(const ::tvm::ffi::Function& loader) {
  for (const ::tvm::ffi::Function& p : Placeholders()) {
    if (p.get() == loader.get()) return true;
  }
  return false;
}

void SetPlaceholder(const std::string& name, ::tvm::ffi::Function placeholder) {
  Placeholders().push_back(placeholder);
  ::tvm::ffi::Function::SetGlobal(name, std::move(placeholder));
}

::tvm::ffi::Module LoadWithRealLoader(const std::string& name, const ::tvm::ffi::Bytes& bytes) {
  auto loader = ::tvm::ffi::Function::GetGlobal(name);
  if (!loader.has_value() || IsPlaceholder(*loader)) {
    backend::ThrowError("RuntimeError", "the backend loaded for '" + name +
                                            "' registered no loader for it; reinstall it");
  }
  return (*loader)(bytes).cast<::tvm::ffi::Module>();
}

/* A kind declared by a wheel that serves no device (the external-codegen runtimes of
 * tvm-runtime-dnnl, ...): its modules hold no kernel table to defer to, and run on the CPU, so
 * the artifact fails at load, naming the wheel. */
void RegisterHostRuntimePlaceholder(const std::string& kind, const std::string& distribution) {
  std::string name = "ffi.Module.load_from_bytes." + kind;
  if (::tvm::ffi::Function::GetGlobal(name).has_value()) return;  // a real loader exists
  std::string message = "Cannot load the '" + kind +
                        "' module embedded in this artifact: modules of this kind are run by " +
                        "the " + distribution + " wheel, which is not installed or did not " +
                        "load (pip install " + distribution +
                        "; `python -m tvm.backend` says why it did not load).";
  SetPlaceholder(name, ::tvm::ffi::Function::FromTyped(
                           [name, distribution,
                            message](const ::tvm::ffi::Bytes& bytes) -> ::tvm::ffi::Module {
                             if (LoadBackendOfDistribution(distribution))
                               return LoadWithRealLoader(name, bytes);
                             backend::ThrowError("RuntimeError", message);
                           }));
}

void RegisterPlaceholder(const std::string& kind, int device_type, const std::string& why = "") {
  std::string name = "ffi.Module.load_from_bytes." + kind;
  if (::tvm::ffi::Function::GetGlobal(name).has_value()) return;  // a real loader exists
  SetPlaceholder(name, ::tvm::ffi::Function::FromTyped(
                           [name, kind, device_type, why](const ::tvm::ffi::Bytes& bytes) {
                             // Without Python the backend is loaded here, on first use, when it is
                             // installed.
                             if (device_type != 0 && LoadBackendForDevice(device_type)) {
                               return LoadWithRealLoader(name, bytes);
                             }
                             return LoadStandIn(kind, device_type, why, bytes);
                           }));
}

}  // namespace

void RegisterMissingBackendLoaders() {
  for (const ModuleKindOwner* owner = ModuleKindOwners(); owner->kind != nullptr; ++owner) {
    if (owner->device_type == kDLCPU) {
      RegisterHostRuntimePlaceholder(owner->kind, owner->distribution);
    } else {
      RegisterPlaceholder(owner->kind, owner->device_type);
    }
  }
  for (const UnservedKind& unserved : kUnservedKinds) {
    bool declared = false;
    for (const ModuleKindOwner* owner = ModuleKindOwners(); owner->kind != nullptr; ++owner) {
      declared = declared || unserved.kind == std::string(owner->kind);
    }
    if (!declared) RegisterPlaceholder(unserved.kind, 0, unserved.why);
  }
}

}  // namespace core
}  // namespace tvm_runtime
