/*
 * Which wheel serves what: the distribution that serves a device type, loads a device-module
 * kind, or registers a global function, as the backends declare it themselves
 * ([tool.tvm-runtime] of packages/<dist>/pyproject.toml).  The tables are generated at build time
 * by packages/release_train.py (`cxx`), so adding a backend never means editing the core.
 */
#ifndef TVM_RUNTIME_CORE_WHEEL_OWNERS_H_
#define TVM_RUNTIME_CORE_WHEEL_OWNERS_H_

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

/* Whether `name` is `pattern`, or starts with it when the pattern is a family ("prefix*"). */
bool PatternMatches(const char* pattern, const std::string& name);

/* The distribution that registers global function `name` ("" if none is declared). */
std::string DistributionForFunction(const std::string& name);

/* Loads the backend wheel that declares global function `name` (e.g. tvm-runtime-extra for
 * "tvm.contrib.sort.argsort") when it is installed, not loaded yet and on-demand loading is on
 * (a C++ program; Python's loader has loaded every installed backend already).  True when this
 * call loaded it: the caller looks the function up again. */
bool LoadWheelOfFunction(const std::string& name);

/* tvm-ffi's lookup of a function called by compiled host code (the artifact's
 * `__TVMFFIEnvModLookupFromImports` context symbol): a function of a wheel not loaded yet loads
 * it (LoadWheelOfFunction), and the error also says what is missing (MissingFunctionAdvice: the
 * wheel to install, ...). */
int LookupFromImportsWithHint(TVMFFIObjectHandle library_ctx, const char* name,
                              TVMFFIObjectHandle* out);

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_WHEEL_OWNERS_H_
