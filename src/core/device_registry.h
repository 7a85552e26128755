/*
 * The core's table of device backends, indexed by DLDeviceType.  Backends (and the built-in
 * CPU device) register a TVMRuntimeDeviceAPI table; everything else in the core reaches devices
 * only through Lookup/Require, so the CPU takes the same path as OpenCL or CUDA.
 */
#ifndef TVM_RUNTIME_CORE_DEVICE_REGISTRY_H_
#define TVM_RUNTIME_CORE_DEVICE_REGISTRY_H_

#include <tvm/ffi/any.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <cstddef>
#include <string>

namespace tvm_runtime {
namespace core {

constexpr int kMaxDeviceType = 64;

/* The table serving `device_type`, or nullptr. Lock-free: tables are published once. */
const TVMRuntimeDeviceAPI* LookupDevice(int device_type);

/* Like LookupDevice but throws a RuntimeError telling the user which wheel to install (or why
 * the installed backend failed to load). */
const TVMRuntimeDeviceAPI& RequireDevice(int device_type);

/* Whether the table's `data` handles are addresses an offset can be added to: its flags, or for
 * a table older than ABI 1.3 (registered tables keep the backend's struct_size) what the cores of
 * those ABIs assumed. */
inline bool HasPointerArithmetic(const TVMRuntimeDeviceAPI& api) {
  if (api.struct_size >= offsetof(TVMRuntimeDeviceAPI, flags) + sizeof(api.flags)) {
    return (api.flags & TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC) != 0;
  }
  switch (api.device_type) {
    case kDLCPU:
    case kDLCUDA:
    case kDLCUDAHost:
    case kDLCUDAManaged:
    case kDLROCM:
    case kDLROCMHost:
      return true;
    default:
      return false;
  }
}

/* Short name of a device type ("cpu", "cuda", "opencl", ...). */
std::string DeviceTypeName(int device_type);

/* The pip distribution that serves a device type, e.g. "tvm-runtime-opencl" ("" if none). */
std::string DistributionForDevice(int device_type);

/* Recorded by the Python side when the backend for a device type failed to load, so later
 * errors can say why instead of "install it". */
void NoteBackendFailure(int device_type, const std::string& reason);

/* Throw-on-error wrappers around the table entries. */
inline void Check(int rc) { backend::CheckCall(rc); }

/* Discards the error a failed table call raised, where nothing can be thrown (destructors). */
inline void DropRaisedError() {
  TVMFFIObjectHandle ignored = nullptr;
  TVMFFIErrorMoveFromRaised(&ignored);
  if (ignored != nullptr) TVMFFIObjectDecRef(ignored);
}

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_DEVICE_REGISTRY_H_
