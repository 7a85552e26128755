#include "rocm_device_api.h"

#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>

#include <algorithm>

#include "code_object.h"
#include "hip_error.h"
#include "rocm_runtime.h"

namespace tvm_runtime {
namespace rocm {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::String;

// hipMalloc returns at least 256-byte aligned memory; TVM asks for 64.
constexpr uint64_t kDeviceAllocAlignment = 256;

RocmRuntime& Runtime() { return RocmRuntime::Global(); }

/* NULL means "the current stream of the device": what the tvm-ffi stream context holds for
 * this thread (itself NULL, HIP's default stream, unless the user set one).  Copies, launches
 * and syncs all resolve it the same way, so they stay ordered with each other. */
hipStream_t ResolveStream(int32_t device_id, void* stream) {
  if (stream != nullptr) return static_cast<hipStream_t>(stream);
  return static_cast<hipStream_t>(TVMFFIEnvGetStream(kDeviceTypeROCM, device_id));
}

// Errors at interpreter shutdown, after the runtime tore down its state: nothing left to free.
bool IsShutdownError(hipError_t rc) {
  return rc == hipErrorDeinitialized || rc == hipErrorNotInitialized;
}

[[noreturn]] void ThrowOutOfMemory(const RocmDevice& d, uint64_t nbytes) {
  size_t free_bytes = 0, total_bytes = 0;
  std::string detail;
  if (Runtime().api().MemGetInfo(&free_bytes, &total_bytes) == hipSuccess) {
    detail = "; " + std::to_string(free_bytes >> 20) + " MiB of " +
             std::to_string(total_bytes >> 20) + " MiB are free";
  }
  backend::ThrowError("RuntimeError", "out of memory on " + d.Describe() + ": cannot allocate " +
                                          std::to_string(nbytes) + " bytes" + detail);
}

/* Every flat copy that involves ROCm device memory. */
void CopyWithHip(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                 uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, void* stream) {
  RocmRuntime& rt = Runtime();
  const HipApi& api = rt.api();
  const char* src = static_cast<const char*>(from) + from_offset;
  char* dst = static_cast<char*>(to) + to_offset;
  switch (backend::ClassifyCopy(dev_from, dev_to, kDeviceTypeROCM, "ROCm")) {
    case backend::CopyDirection::kDeviceToDevice: {
      RocmDevice& s = rt.Device(dev_from.device_id);
      RocmDevice& d = rt.Device(dev_to.device_id);
      rt.MakeCurrent(s);
      hipStream_t st = ResolveStream(s.id, stream);
      if (s.id == d.id) {
        CheckHip(api.MemcpyAsync(dst, src, nbytes, hipMemcpyDeviceToDevice, st),
                 "hipMemcpyAsync(device to device)");
      } else {
        CheckHip(api.MemcpyPeerAsync(dst, d.id, src, s.id, nbytes, st),
                 "hipMemcpyPeerAsync from " + s.Describe() + " to " + d.Describe());
      }
      break;
    }
    case backend::CopyDirection::kDeviceToHost: {
      RocmDevice& s = rt.Device(dev_from.device_id);
      rt.MakeCurrent(s);
      CheckHip(
          api.MemcpyAsync(dst, src, nbytes, hipMemcpyDeviceToHost, ResolveStream(s.id, stream)),
          "hipMemcpyAsync(device to host)");
      break;
    }
    case backend::CopyDirection::kHostToDevice: {
      RocmDevice& d = rt.Device(dev_to.device_id);
      rt.MakeCurrent(d);
      CheckHip(
          api.MemcpyAsync(dst, src, nbytes, hipMemcpyHostToDevice, ResolveStream(d.id, stream)),
          "hipMemcpyAsync(host to device)");
      break;
    }
  }
}

std::string ThreadDimensions(const RocmDevice& d) {
  const int dims[3] = {d.Attribute(hipDeviceAttributeMaxBlockDimX),
                       d.Attribute(hipDeviceAttributeMaxBlockDimY),
                       d.Attribute(hipDeviceAttributeMaxBlockDimZ)};
  return backend::JsonIntList(dims, 3);
}

std::string ComputeVersion(const RocmDevice& d) {
  return std::to_string(d.Attribute(hipDeviceAttributeComputeCapabilityMajor)) + "." +
         std::to_string(d.Attribute(hipDeviceAttributeComputeCapabilityMinor));
}

/* What a sync of pinned host memory (rocm_host) waits for: the device work that may read or write
 * it.  `stream` NULL: the current stream of every device (HIP streams know their device, but the
 * NULL stream is the current device's, hence the switch, undone afterwards); otherwise that
 * stream. */
void SyncPinnedMemoryUsers(void* stream) {
  RocmRuntime& rt = Runtime();
  if (!rt.Available()) return;  // no runtime: nothing can be in flight
  const HipApi& api = rt.api();
  if (stream != nullptr) {
    CheckHip(api.StreamSynchronize(static_cast<hipStream_t>(stream)), "hipStreamSynchronize");
    return;
  }
  int previous = -1;
  if (api.GetDevice(&previous) != hipSuccess) previous = -1;
  for (int32_t id = 0; id < rt.NumDevices(); ++id) {
    RocmDevice& d = rt.Device(id);
    rt.MakeCurrent(d);
    hipError_t rc = api.StreamSynchronize(ResolveStream(id, nullptr));
    if (rc != hipSuccess) {
      if (previous >= 0) api.SetDevice(previous);
      CheckHip(rc, "hipStreamSynchronize of " + d.Describe() + " for pinned host memory");
    }
  }
  if (previous >= 0) rt.MakeCurrent(rt.Device(previous));
}

}  // namespace

void RocmDeviceAPI::SelectDevice(int32_t device_id) {
  RocmRuntime& rt = Runtime();
  rt.MakeCurrent(rt.Device(device_id));  // validates, and initializes HIP on first use
}

Any RocmDeviceAPI::DeviceAttr(int32_t device_id, int32_t kind) {
  RocmRuntime& rt = Runtime();
  RocmDevice& d = rt.Device(device_id);
  switch (kind) {
    case kTVMRuntimeAttrMaxThreadsPerBlock:
      return static_cast<int64_t>(d.Attribute(hipDeviceAttributeMaxThreadsPerBlock));
    case kTVMRuntimeAttrWarpSize:
      return static_cast<int64_t>(d.warp_size);
    case kTVMRuntimeAttrMaxSharedMemoryPerBlock:
      return static_cast<int64_t>(d.Attribute(hipDeviceAttributeMaxSharedMemoryPerBlock));
    case kTVMRuntimeAttrComputeVersion:
      return String(ComputeVersion(d));
    case kTVMRuntimeAttrDeviceName:
      return String(d.name);
    case kTVMRuntimeAttrMaxClockRate:
      return static_cast<int64_t>(d.Attribute(hipDeviceAttributeClockRate));  // kHz
    case kTVMRuntimeAttrMultiProcessorCount:
      return static_cast<int64_t>(d.Attribute(hipDeviceAttributeMultiprocessorCount));
    case kTVMRuntimeAttrMaxThreadDimensions:
      return String(ThreadDimensions(d));
    case kTVMRuntimeAttrMaxRegistersPerBlock:
      return static_cast<int64_t>(d.Attribute(hipDeviceAttributeMaxRegistersPerBlock));
    case kTVMRuntimeAttrGcnArch:
      return String(d.gcn_arch);  // what apache-tvm reports: gcnArchName with its features
    case kTVMRuntimeAttrApiVersion:
    case kTVMRuntimeAttrDriverVersion:
      // The HIP runtime in use (apache-tvm reports the HIP_VERSION it was built with).
      return static_cast<int64_t>(kind == kTVMRuntimeAttrApiVersion ? rt.RuntimeVersion()
                                                                    : rt.DriverVersion());
    case kTVMRuntimeAttrL2CacheSizeBytes:
      return static_cast<int64_t>(d.Attribute(hipDeviceAttributeL2CacheSize));
    case kTVMRuntimeAttrTotalGlobalMemory: {
      size_t total = 0;
      CheckHip(rt.api().DeviceTotalMem(&total, d.id), "hipDeviceTotalMem");
      return static_cast<int64_t>(total);
    }
    case kTVMRuntimeAttrAvailableGlobalMemory: {
      rt.MakeCurrent(d);
      size_t free_bytes = 0, total_bytes = 0;
      CheckHip(rt.api().MemGetInfo(&free_bytes, &total_bytes), "hipMemGetInfo");
      return static_cast<int64_t>(free_bytes);
    }
    default:
      return Any();  // image pitch alignment is not a HIP concept
  }
}

void* RocmDeviceAPI::AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                               DLDataType type_hint) {
  RocmRuntime& rt = Runtime();
  RocmDevice& d = rt.Device(device_id);
  if (alignment > kDeviceAllocAlignment) {
    backend::ThrowError("ValueError",
                        "ROCm allocations are " + std::to_string(kDeviceAllocAlignment) +
                            "-byte aligned; " + std::to_string(alignment) + " was requested");
  }
  rt.MakeCurrent(d);
  void* ptr = nullptr;
  // One byte for empty tensors keeps `data` non-NULL, as TVM expects.
  hipError_t rc = rt.api().Malloc(&ptr, static_cast<size_t>(std::max<uint64_t>(nbytes, 1)));
  if (rc == hipErrorOutOfMemory) ThrowOutOfMemory(d, nbytes);
  CheckHip(rc, "hipMalloc(" + std::to_string(nbytes) + " bytes) on " + d.Describe());
  return ptr;
}

void RocmDeviceAPI::FreeData(int32_t device_id, void* data) {
  if (data == nullptr) return;
  // hipFree finds the owning device from the (unified) address: no device switch needed.
  hipError_t rc = Runtime().api().Free(data);
  if (!IsShutdownError(rc)) CheckHip(rc, "hipFree");
}

void RocmDeviceAPI::CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                             uint64_t nbytes, DLDevice dev_from, DLDevice dev_to,
                             DLDataType type_hint, void* stream) {
  if (nbytes == 0 ||
      backend::CopyBetweenHosts(from, from_offset, to, to_offset, nbytes, dev_from, dev_to)) {
    return;
  }
  CopyWithHip(from, from_offset, to, to_offset, nbytes, dev_from, dev_to, stream);
}

void RocmDeviceAPI::StreamSync(int32_t device_id, void* stream) {
  RocmRuntime& rt = Runtime();
  rt.MakeCurrent(rt.Device(device_id));
  CheckHip(rt.api().StreamSynchronize(ResolveStream(device_id, stream)), "hipStreamSynchronize");
}

void* RocmDeviceAPI::StreamCreate(int32_t device_id) {
  RocmRuntime& rt = Runtime();
  rt.MakeCurrent(rt.Device(device_id));
  hipStream_t s = nullptr;
  // Non-blocking: work on it does not serialise with the default stream.
  CheckHip(rt.api().StreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  return s;
}

void RocmDeviceAPI::StreamFree(int32_t device_id, void* stream) {
  if (stream == nullptr) return;  // the default stream is not ours to destroy
  hipError_t rc = Runtime().api().StreamDestroy(static_cast<hipStream_t>(stream));
  if (!IsShutdownError(rc)) CheckHip(rc, "hipStreamDestroy");
}

void RocmDeviceAPI::SyncStreamFromTo(int32_t device_id, void* src, void* dst) {
  hipStream_t s = ResolveStream(device_id, src);
  hipStream_t d = ResolveStream(device_id, dst);
  if (s == d) return;  // one stream is already ordered
  RocmRuntime& rt = Runtime();
  rt.MakeCurrent(rt.Device(device_id));
  const HipApi& api = rt.api();
  // Later work on `dst` waits for everything queued on `src` so far, without blocking the host.
  hipEvent_t event = nullptr;
  CheckHip(api.EventCreateWithFlags(&event, hipEventDisableTiming), "hipEventCreateWithFlags");
  hipError_t rc = api.EventRecord(event, s);
  if (rc == hipSuccess) rc = api.StreamWaitEvent(d, event, 0);
  // Destroying a recorded event is safe: the runtime releases it once it completes.
  api.EventDestroy(event);
  CheckHip(rc, "hipEventRecord/hipStreamWaitEvent");
}

Any RocmDeviceAPI::DeviceTargetProperty(int32_t device_id, const std::string& key) {
  RocmRuntime& rt = Runtime();
  RocmDevice& d = rt.Device(device_id);
  struct Entry {
    const char* key;
    int attribute;
  };
  static const Entry kAttributes[] = {
      {"max_threads_per_block", hipDeviceAttributeMaxThreadsPerBlock},
      {"max_shared_memory_per_block", hipDeviceAttributeMaxSharedMemoryPerBlock},
      {"max_shared_memory_per_multiprocessor", hipDeviceAttributeMaxSharedMemoryPerMultiprocessor},
      {"registers_per_block", hipDeviceAttributeMaxRegistersPerBlock},
      {"max_threads_per_multiprocessor", hipDeviceAttributeMaxThreadsPerMultiProcessor},
      {"multi_processor_count", hipDeviceAttributeMultiprocessorCount},
      {"l2_cache_size_bytes", hipDeviceAttributeL2CacheSize},
  };
  if (key == "mcpu") return String(BaseProcessor(d.gcn_arch));
  if (key == "gcn_arch_name") return String(d.gcn_arch);
  if (key == "thread_warp_size") return static_cast<int64_t>(d.warp_size);
  for (const Entry& e : kAttributes) {
    if (key == e.key) return static_cast<int64_t>(d.Attribute(e.attribute));
  }
  return Any();
}

// ------------------------------------------------------------------------------- rocm_host

RocmHostDeviceAPI::RocmHostDeviceAPI()
    : PinnedHostMemory({"ROCm pinned host memory", SyncPinnedMemoryUsers, CopyWithHip}) {}

void* RocmHostDeviceAPI::AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                                   DLDataType type_hint) {
  RocmRuntime& rt = Runtime();
  rt.Device(0);  // a usable runtime, or the reason why not
  void* ptr = nullptr;
  CheckHip(rt.api().HostMalloc(&ptr, static_cast<size_t>(std::max<uint64_t>(nbytes, 1)),
                               hipHostMallocDefault),
           "hipHostMalloc(" + std::to_string(nbytes) + " bytes)");
  return ptr;
}

void RocmHostDeviceAPI::FreeData(int32_t device_id, void* data) {
  if (data == nullptr) return;
  hipError_t rc = Runtime().api().HostFree(data);
  if (!IsShutdownError(rc)) CheckHip(rc, "hipHostFree");
}

}  // namespace rocm
}  // namespace tvm_runtime
