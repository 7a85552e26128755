/*
 * Finding, checking and registering a backend DSO (libtvm_runtime_<name>.so) from C++: the one
 * mechanism behind TVMRuntimeLoadBackend (c_api.h part 5), runtime.LoadBackend, the on-demand
 * loading of a backend an artifact or a device needs, and Python's tvm.backend loader (which
 * hands it the path its hook declares).
 */
#ifndef TVM_RUNTIME_CORE_BACKEND_LOADER_H_
#define TVM_RUNTIME_CORE_BACKEND_LOADER_H_

#include <string>

namespace tvm_runtime {
namespace core {

/* TVMRuntimeLoadBackend's return codes (c_api.h). */
enum BackendLoadStatus : int {
  kBackendLoaded = 0,
  kBackendLoadFailed = 1,
  kBackendABIMismatch = 2,
  kBackendNotFound = 3,
};

/* Loads backend `name` from `path` (or, when `path` is empty, from where it is installed: see
 * FindBackendLibrary) and registers it; idempotent per name.  On failure returns the status and
 * writes the reason, worded as Python's tvm.backend loader words it, into `*why`. */
BackendLoadStatus LoadBackend(const std::string& name, const std::string& path, std::string* why);

/* The backend serving `device_type` (from the wheels' declarations), loaded if it is installed
 * and on-demand loading is on.  True when this call loaded it.  A backend that is installed but
 * fails is noted on its device types (NoteBackendFailure), so the error the caller raises next
 * says why instead of "install it". */
bool LoadBackendForDevice(int device_type);

/* The same for the backend of distribution `distribution` ("tvm-runtime-dnnl"). */
bool LoadBackendOfDistribution(const std::string& distribution);

/* On-demand loading is on unless the host turned it off (Python's loader manages backends
 * itself) or TVM_DEVICE_BACKEND_AUTOLOAD=0. */
void SetBackendOnDemand(bool enabled);

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_BACKEND_LOADER_H_
