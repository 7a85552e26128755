#include "backend_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core_init.h"
#include "device_registry.h"
#include "wheel_owners.h"

namespace tvm_runtime {
namespace core {
namespace {

constexpr char kDistributionPrefix[] = "tvm-runtime-";
// Directories (':'-separated) searched before the ones beside the core.
constexpr char kBackendPathVariable[] = "TVM_RUNTIME_BACKEND_PATH";
#ifdef __APPLE__
constexpr char kDSOSuffix[] = ".dylib";
#else
constexpr char kDSOSuffix[] = ".so";
#endif

struct LoadedBackend {
  std::string path;
  uint32_t abi_version;
  void* handle;  // never closed: a backend's functions live in the registry for good
};

struct LoaderState {
  // Recursive: a backend's registration may itself need a device, and so ask for a backend.
  std::recursive_mutex mu;
  std::unordered_map<std::string, LoadedBackend> loaded;
  std::unordered_set<std::string> tried_on_demand;
  std::atomic<bool> on_demand{true};
};

LoaderState& State() {
  static LoaderState* state = new LoaderState();  // leaked: outlives static destructors
  return *state;
}

std::string LibraryFileName(const std::string& name) {
  return "libtvm_runtime_" + name + kDSOSuffix;
}

std::string Distribution(const std::string& name) { return kDistributionPrefix + name; }

// Lowercase letters, digits and '_' only: a name to search for becomes part of a file name.
bool IsValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// The directory libtvm_runtime itself was loaded from (symlinks resolved).
std::string CoreDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&TVMRuntimeGetABIVersion), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  char resolved[PATH_MAX];
  if (::realpath(info.dli_fname, resolved) != nullptr) return DirectoryOf(resolved);
  return DirectoryOf(info.dli_fname);
}

/* Where an installed backend is looked for, in order:
 *   1. every directory of $TVM_RUNTIME_BACKEND_PATH;
 *   2. the core's own directory: a deploy bundle's <prefix>/lib holds core and backends;
 *   3. <core dir>/../backend/<name>/: the wheels' layout in a Python environment
 *      (site-packages/tvm/lib/libtvm_runtime.so, site-packages/tvm/backend/<name>/...). */
std::vector<std::string> SearchDirectories(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv(kBackendPathVariable)) {
    std::string value(env);
    size_t start = 0;
    while (start <= value.size()) {
      size_t end = value.find(':', start);
      if (end == std::string::npos) end = value.size();
      if (end > start) dirs.push_back(value.substr(start, end - start));
      start = end + 1;
    }
  }
  std::string core_dir = CoreDirectory();
  if (!core_dir.empty()) {
    dirs.push_back(core_dir);
    dirs.push_back(core_dir + "/../backend/" + name);
  }
  return dirs;
}

// The path of a backend that the program links (or something else loaded), else "".
std::string AlreadyInProcess(const std::string& name) {
  void* handle =
      dlopen(LibraryFileName(name).c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);  // by SONAME
  if (handle == nullptr) return "";
  std::string path;
  Dl_info info;
  void* entry = dlsym(handle, TVM_RUNTIME_BACKEND_ABI_VERSION_SYMBOL);
  if (entry != nullptr && dladdr(entry, &info) != 0 && info.dli_fname != nullptr) {
    path = info.dli_fname;
  }
  dlclose(handle);  // drops only the reference RTLD_NOLOAD took
  return path;
}

bool IsDeclaredBackend(const std::string& name) {
  std::string dist = Distribution(name);
  for (int t = 1; t < kMaxDeviceType; ++t) {
    const DeviceOwner* owner = FindDeviceOwner(t);
    if (owner != nullptr && dist == owner->distribution) return true;
  }
  for (const ModuleKindOwner* k = ModuleKindOwners(); k->kind != nullptr; ++k) {
    if (dist == k->distribution) return true;
  }
  return false;
}

std::string NotInstalledMessage(const std::string& name, const std::vector<std::string>& dirs) {
  std::string looked = "Looked for " + LibraryFileName(name) + " in:";
  for (const std::string& dir : dirs) looked += " " + dir;
  looked += std::string(" (a deploy bundle keeps backends beside libtvm_runtime; ") +
            kBackendPathVariable + " names more directories).";
  if (IsDeclaredBackend(name)) {
    // Python's tvm.backend.loader says exactly this first sentence.
    return "Cannot load TVM backend '" + name + "': it is not installed. Install it: pip install " +
           Distribution(name) + ". " + looked;
  }
  return "Cannot load TVM backend '" + name + "': no such backend is installed. " + looked +
         " tvm-runtime's backends are wheels named tvm-runtime-<name>; a third-party backend "
         "comes from its own distribution.";
}

// The checks and registration, worded as tvm.backend._dso words them.
BackendLoadStatus LoadFromPath(const std::string& name, const std::string& path, std::string* why) {
  if (!Exists(path)) {
    *why = "backend library " + path + " is missing (incomplete install)";
    return kBackendLoadFailed;
  }
  // RTLD_LOCAL: backends never interpose each other; they reach the core by SONAME.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    *why = "cannot load " + path + ": " + (err ? err : "dlopen failed");
    return kBackendLoadFailed;
  }
  auto version_fn = reinterpret_cast<TVMRuntimeBackendABIVersionFn>(
      dlsym(handle, TVM_RUNTIME_BACKEND_ABI_VERSION_SYMBOL));
  auto register_fn = reinterpret_cast<TVMRuntimeBackendRegisterFn>(
      dlsym(handle, TVM_RUNTIME_BACKEND_REGISTER_SYMBOL));
  if (version_fn == nullptr || register_fn == nullptr) {
    *why = path + " is not a tvm-runtime backend (entry points missing)";
    return kBackendLoadFailed;
  }
  uint32_t abi_version = version_fn();
  char reason[1024] = {0};
  if (TVMRuntimeCheckBackendABI(abi_version, reason, sizeof(reason)) != 0) {
    *why = reason;
    return kBackendABIMismatch;
  }
  char err[4096] = {0};
  if (register_fn(err, sizeof(err)) != 0) {
    *why = std::string("registration failed: ") + err;
    return kBackendLoadFailed;
  }
  State().loaded[name] = LoadedBackend{path, abi_version, handle};
  return kBackendLoaded;
}

bool IsFalsy(const char* value) {
  std::string v = value ? value : "";
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "0" || v == "false" || v == "no" || v == "off";
}

// The same switches as Python's loader: TVM_DEVICE_BACKEND_AUTOLOAD=0 and TVM_BACKENDS.
bool OnDemandAllowed(const std::string& name) {
  if (!State().on_demand.load()) return false;
  if (IsFalsy(std::getenv("TVM_DEVICE_BACKEND_AUTOLOAD"))) return false;
  const char* allow = std::getenv("TVM_BACKENDS");
  if (allow == nullptr) return true;
  std::string list(allow);
  bool any = false;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    for (char& c : item) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!item.empty()) any = true;
    if (item == name) return true;
    start = end + 1;
  }
  return !any;  // an empty allow-list allows everything, as in Python
}

bool LoadOnDemand(const std::string& name) {
  LoaderState& state = State();
  std::lock_guard<std::recursive_mutex> lock(state.mu);
  if (state.loaded.count(name) != 0 || !state.tried_on_demand.insert(name).second) return false;
  if (!OnDemandAllowed(name)) return false;
  std::string why;
  BackendLoadStatus status = LoadBackend(name, "", &why);
  if (status == kBackendLoaded) return true;
  if (status == kBackendNotFound) return false;  // the caller's error says what to install
  // Installed but unusable: what Python's loader notes on the backend's devices.
  std::string dist = Distribution(name);
  std::string reason =
      (status == kBackendABIMismatch ? "BackendABIError: " : "BackendLoadError: ") + why +
      "; fix: ";
  if (status == kBackendABIMismatch) {
    reason += "pip install \"tvm[" + name + "]==" + TVM_RUNTIME_VERSION +
              "\"  (or upgrade both: pip install -U tvm-runtime " + dist + ")";
  } else {
    reason += "pip install --force-reinstall --no-deps " + dist;
  }
  for (int t = 1; t < kMaxDeviceType; ++t) {
    const DeviceOwner* owner = FindDeviceOwner(t);
    if (owner != nullptr && dist == owner->distribution) NoteBackendFailure(t, reason);
  }
  return false;
}

std::string LoadBackendOrThrow(const std::string& name) {
  std::string why;
  if (LoadBackend(name, "", &why) != kBackendLoaded) backend::ThrowError("RuntimeError", why);
  std::lock_guard<std::recursive_mutex> lock(State().mu);
  return State().loaded[name].path;
}

}  // namespace

BackendLoadStatus LoadBackend(const std::string& name, const std::string& path, std::string* why) {
  LoaderState& state = State();
  std::lock_guard<std::recursive_mutex> lock(state.mu);
  if (state.loaded.count(name) != 0) return kBackendLoaded;
  if (!path.empty()) return LoadFromPath(name, path, why);  // the name is only a key then
  if (!IsValidName(name)) {
    *why = "invalid backend name '" + name + "': use lowercase letters, digits and '_'";
    return kBackendLoadFailed;
  }
  std::string found = AlreadyInProcess(name);
  std::vector<std::string> dirs = SearchDirectories(name);
  for (size_t i = 0; found.empty() && i < dirs.size(); ++i) {
    std::string candidate = dirs[i] + "/" + LibraryFileName(name);
    if (Exists(candidate)) found = candidate;
  }
  if (found.empty()) {
    *why = NotInstalledMessage(name, dirs);
    return kBackendNotFound;
  }
  return LoadFromPath(name, found, why);
}

bool LoadBackendForDevice(int device_type) {
  const DeviceOwner* owner = FindDeviceOwner(device_type);
  return owner != nullptr && owner->backend != nullptr && LoadOnDemand(owner->backend);
}

bool LoadBackendOfDistribution(const std::string& distribution) {
  size_t n = std::strlen(kDistributionPrefix);
  if (distribution.compare(0, n, kDistributionPrefix) != 0) return false;
  return LoadOnDemand(distribution.substr(n));
}

void SetBackendOnDemand(bool enabled) { State().on_demand.store(enabled); }

void RegisterBackendLoader() {
  ::tvm::ffi::reflection::GlobalDef().def("runtime.LoadBackend", LoadBackendOrThrow);
}

}  // namespace core
}  // namespace tvm_runtime

extern "C" TVM_RUNTIME_DLL int TVMRuntimeLoadBackend(const char* name, const char* path, char* err,
                                                     size_t err_len) {
  std::string why;
  int status = tvm_runtime::core::kBackendLoadFailed;
  try {
    status = tvm_runtime::core::LoadBackend(name ? name : "", path ? path : "", &why);
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "unknown C++ exception";
  }
  if (status != 0 && err != nullptr && err_len != 0) std::snprintf(err, err_len, "%s", why.c_str());
  return status;
}

extern "C" TVM_RUNTIME_DLL void TVMRuntimeSetBackendOnDemand(int enabled) {
  tvm_runtime::core::SetBackendOnDemand(enabled != 0);
}
