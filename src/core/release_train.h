/*
 * What the release train's declarations (packages/<dist>/pyproject.toml, [tool.tvm-runtime])
 * say about the wheels other than the core: which distribution serves a device type, loads a
 * device-module kind, or registers a global function.  The tables are generated at build time
 * by packages/release_train.py, so adding a backend never means editing the core.
 */
#ifndef TVM_RUNTIME_CORE_RELEASE_TRAIN_H_
#define TVM_RUNTIME_CORE_RELEASE_TRAIN_H_

#include <tvm/ffi/c_api.h>

#include <string>

namespace tvm_runtime {
namespace core {

struct DeviceOwner {
  int device_type;
  const char* distribution;
  const char* backend;
};

struct ModuleKindOwner {
  const char* kind;
  const char* distribution;
  int device_type;  // the device its functions run on
};

struct FunctionOwner {
  const char* pattern;  // an exact name, or a family when it ends with '*'
  const char* distribution;
};

/* The backend declared for `device_type`, or nullptr. */
const DeviceOwner* FindDeviceOwner(int device_type);

/* Every declared device-module kind, terminated by an entry whose kind is nullptr. */
const ModuleKindOwner* ModuleKindOwners();

/* Every declared global function (or family), terminated by an entry whose pattern is nullptr. */
const FunctionOwner* FunctionOwners();

/* The distribution that registers global function `name` ("" if none is declared). */
std::string DistributionForFunction(const std::string& name);

/* Registered by the core's Python package (tvm.backend): (str distribution) -> str, one of
 * "not installed", "loaded <version>", or why an installed wheel is not loaded. */
constexpr const char* kDistributionStatusGlobal = "tvm_runtime.backend.distribution_status";

/* What to do about a missing declared function: which wheel provides it and whether that wheel
 * is missing, installed but not loaded, or loaded without the function (too old); "" when no
 * wheel declares it. */
std::string MissingFunctionHint(const std::string& name);

/* tvm-ffi's lookup of a function called by compiled host code (the artifact's
 * `__TVMFFIEnvModLookupFromImports` context symbol), whose error also names the wheel that
 * provides a declared function. */
int LookupFromImportsWithHint(TVMFFIObjectHandle library_ctx, const char* name,
                              TVMFFIObjectHandle* out);

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_RELEASE_TRAIN_H_
