#include "cuda_device_api.h"

#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/gpu/device_info_util.h>

#include <algorithm>
#include <cstring>

#include "cuda_error.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::String;

// Reported as Device.api_version: the cuda.h release whose driver API this backend is written
// (and checked) against.  apache-tvm reports the CUDA_VERSION it was built with.
constexpr int64_t kCudaApiVersion = 13000;
// cuMemAlloc returns at least 256-byte aligned memory; TVM asks for 64.
constexpr uint64_t kDeviceAllocAlignment = 256;

CudaRuntime& Runtime() { return CudaRuntime::Global(); }

/* NULL means "the current stream of the device": what the tvm-ffi stream context holds for
 * this thread (itself NULL, the legacy default stream, unless the user set one).  Copies,
 * launches and syncs all resolve it the same way, so they stay ordered with each other. */
CUstream ResolveStream(int32_t device_id, void* stream) {
  if (stream != nullptr) return static_cast<CUstream>(stream);
  return static_cast<CUstream>(TVMFFIEnvGetStream(kDeviceTypeCUDA, device_id));
}

CUdeviceptr DevicePtr(const void* data, uint64_t offset) {
  return reinterpret_cast<CUdeviceptr>(data) + offset;
}

// Errors at interpreter shutdown, after the driver tore down its state: nothing left to free.
bool IsShutdownError(CUresult rc) {
  return rc == CUDA_ERROR_DEINITIALIZED || rc == CUDA_ERROR_NOT_INITIALIZED;
}

std::string Describe(const CudaDevice& d) {
  return "CUDA device " + std::to_string(d.id) + " (" + d.name + ")";
}

[[noreturn]] void ThrowOutOfMemory(CudaDevice& d, uint64_t nbytes) {
  size_t free_bytes = 0, total_bytes = 0;
  std::string detail;
  if (Runtime().api().MemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS) {
    detail = "; " + std::to_string(free_bytes >> 20) + " MiB of " +
             std::to_string(total_bytes >> 20) + " MiB are free";
  }
  backend::ThrowError("RuntimeError", "out of memory on " + Describe(d) + ": cannot allocate " +
                                          std::to_string(nbytes) + " bytes" + detail);
}

/* A peer copy runs on the source device's stream (`src_stream`, its context current), but what
 * reads the copy next is work on the destination device: its current stream waits for the copy
 * (an event), so a sync of the destination, or a kernel there, never sees it unfinished. */
void OrderDestinationAfter(CUstream src_stream, CudaDevice& dst) {
  CudaRuntime& rt = Runtime();
  const CuApi& api = rt.api();
  CUevent event = nullptr;
  CheckCu(api.EventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUresult rc = api.EventRecord(event, src_stream);
  if (rc == CUDA_SUCCESS) {
    ScopedContext scope(api, rt.Context(dst));
    rc = api.StreamWaitEvent(ResolveStream(dst.id, nullptr), event, 0);
  }
  api.EventDestroy(event);  // in the source's context again; released once it completes
  CheckCu(rc, "cuEventRecord/cuStreamWaitEvent ordering " + Describe(dst) + " after a peer copy");
}

/* Every flat copy that involves CUDA memory; at least one side is a CUDA device. */
void CopyWithCuda(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                  uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, void* stream) {
  CudaRuntime& rt = Runtime();
  const CuApi& api = rt.api();
  switch (backend::ClassifyCopy(dev_from, dev_to, kDeviceTypeCUDA, "CUDA")) {
    case backend::CopyDirection::kDeviceToDevice: {
      CudaDevice& src = rt.Device(dev_from.device_id);
      CudaDevice& dst = rt.Device(dev_to.device_id);
      rt.MakeCurrent(src);
      CUstream s = ResolveStream(src.id, stream);
      if (src.id == dst.id) {
        CheckCu(
            api.MemcpyDtoDAsync(DevicePtr(to, to_offset), DevicePtr(from, from_offset), nbytes, s),
            "cuMemcpyDtoDAsync");
      } else {
        CheckCu(api.MemcpyPeerAsync(DevicePtr(to, to_offset), rt.Context(dst),
                                    DevicePtr(from, from_offset), rt.Context(src), nbytes, s),
                "cuMemcpyPeerAsync from " + Describe(src) + " to " + Describe(dst));
        OrderDestinationAfter(s, dst);
      }
      break;
    }
    case backend::CopyDirection::kDeviceToHost: {
      CudaDevice& src = rt.Device(dev_from.device_id);
      rt.MakeCurrent(src);
      CheckCu(api.MemcpyDtoHAsync(static_cast<char*>(to) + to_offset, DevicePtr(from, from_offset),
                                  nbytes, ResolveStream(src.id, stream)),
              "cuMemcpyDtoHAsync");
      break;
    }
    case backend::CopyDirection::kHostToDevice: {
      CudaDevice& dst = rt.Device(dev_to.device_id);
      rt.MakeCurrent(dst);
      // Returns once pageable source memory is staged, so the caller may reuse it right away.
      CheckCu(api.MemcpyHtoDAsync(DevicePtr(to, to_offset),
                                  static_cast<const char*>(from) + from_offset, nbytes,
                                  ResolveStream(dst.id, stream)),
              "cuMemcpyHtoDAsync");
      break;
    }
  }
}

/* What a sync of pinned host memory (cuda_host) waits for: the device work that may read or write
 * it.  `stream` NULL: the current stream of every device this process has made a context for
 * (a device without one has run nothing); otherwise that stream, in its own context. */
void SyncPinnedMemoryUsers(void* stream) {
  CudaRuntime& rt = Runtime();
  if (!rt.Available()) return;  // no driver: nothing can be in flight
  const CuApi& api = rt.api();
  if (stream != nullptr) {
    auto s = static_cast<CUstream>(stream);
    CUcontext ctx = nullptr;
    if (api.StreamGetCtx != nullptr) CheckCu(api.StreamGetCtx(s, &ctx), "cuStreamGetCtx");
    if (ctx == nullptr) {
      CheckCu(api.StreamSynchronize(s), "cuStreamSynchronize");
      return;
    }
    ScopedContext scope(api, ctx);
    CheckCu(api.StreamSynchronize(s), "cuStreamSynchronize");
    return;
  }
  for (int32_t id = 0; id < rt.NumDevices(); ++id) {
    CudaDevice& d = rt.Device(id);
    CUcontext ctx = d.context.load(std::memory_order_acquire);
    if (ctx == nullptr) continue;
    ScopedContext scope(api, ctx);
    CheckCu(api.StreamSynchronize(ResolveStream(id, nullptr)),
            "cuStreamSynchronize of " + Describe(d) + " for pinned host memory");
  }
}

std::string ThreadDimensions(const CudaDevice& d) {
  const int dims[3] = {d.Attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                       d.Attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                       d.Attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
  return backend::JsonIntList(dims, 3);
}

std::string ComputeVersion(const CudaDevice& d) {
  return std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
}

}  // namespace

void CudaDeviceAPI::SelectDevice(int32_t device_id) {
  CudaRuntime& rt = Runtime();
  rt.MakeCurrent(rt.Device(device_id));  // validates, and initializes CUDA on first use
}

Any CudaDeviceAPI::DeviceAttr(int32_t device_id, int32_t kind) {
  CudaRuntime& rt = Runtime();
  CudaDevice& d = rt.Device(device_id);
  switch (kind) {
    case kTVMRuntimeAttrMaxThreadsPerBlock:
      return static_cast<int64_t>(d.Attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
    case kTVMRuntimeAttrWarpSize:
      return static_cast<int64_t>(d.Attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE));
    case kTVMRuntimeAttrMaxSharedMemoryPerBlock:
      return static_cast<int64_t>(d.Attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    case kTVMRuntimeAttrComputeVersion:
      return String(ComputeVersion(d));
    case kTVMRuntimeAttrDeviceName:
      return String(d.name);
    case kTVMRuntimeAttrMaxClockRate:
      return static_cast<int64_t>(d.Attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));  // kHz
    case kTVMRuntimeAttrMultiProcessorCount:
      return static_cast<int64_t>(d.Attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
    case kTVMRuntimeAttrMaxThreadDimensions:
      return String(ThreadDimensions(d));
    case kTVMRuntimeAttrMaxRegistersPerBlock:
      return static_cast<int64_t>(d.Attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
    case kTVMRuntimeAttrApiVersion:
      return kCudaApiVersion;
    case kTVMRuntimeAttrDriverVersion:
      return static_cast<int64_t>(rt.DriverVersion());
    case kTVMRuntimeAttrL2CacheSizeBytes:
      return static_cast<int64_t>(d.Attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    case kTVMRuntimeAttrTotalGlobalMemory: {
      size_t total = 0;
      CheckCu(rt.api().DeviceTotalMem(&total, d.handle), "cuDeviceTotalMem");
      return static_cast<int64_t>(total);
    }
    case kTVMRuntimeAttrAvailableGlobalMemory: {
      // Needs a context; use the device's without changing this thread's current one.
      ScopedContext scope(rt.api(), rt.Context(d));
      size_t free_bytes = 0, total_bytes = 0;
      CheckCu(rt.api().MemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo");
      return static_cast<int64_t>(free_bytes);
    }
    default:
      // GCN arch and image pitch alignment are not CUDA concepts.
      return Any();
  }
}

void* CudaDeviceAPI::AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                               DLDataType type_hint) {
  CudaRuntime& rt = Runtime();
  CudaDevice& d = rt.Device(device_id);
  if (alignment > kDeviceAllocAlignment) {
    backend::ThrowError("ValueError",
                        "CUDA allocations are " + std::to_string(kDeviceAllocAlignment) +
                            "-byte aligned; " + std::to_string(alignment) + " was requested");
  }
  rt.MakeCurrent(d);
  CUdeviceptr ptr = 0;
  // Zero-byte allocations are invalid in CUDA; one byte keeps `data` non-NULL as TVM expects.
  CUresult rc = rt.api().MemAlloc(&ptr, static_cast<size_t>(std::max<uint64_t>(nbytes, 1)));
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) ThrowOutOfMemory(d, nbytes);
  CheckCu(rc, "cuMemAlloc(" + std::to_string(nbytes) + " bytes) on " + Describe(d));
  return reinterpret_cast<void*>(ptr);
}

void CudaDeviceAPI::FreeData(int32_t device_id, void* data) {
  if (data == nullptr) return;
  CudaRuntime& rt = Runtime();
  CudaDevice& d = rt.Device(device_id);
  // Workspace pools free from whatever thread exits; keep that thread's context unchanged.
  ScopedContext scope(rt.api(), rt.Context(d));
  CUresult rc = rt.api().MemFree(reinterpret_cast<CUdeviceptr>(data));
  if (!IsShutdownError(rc)) CheckCu(rc, "cuMemFree");
}

void CudaDeviceAPI::CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                             uint64_t nbytes, DLDevice dev_from, DLDevice dev_to,
                             DLDataType type_hint, void* stream) {
  if (nbytes == 0 ||
      backend::CopyBetweenHosts(from, from_offset, to, to_offset, nbytes, dev_from, dev_to)) {
    return;
  }
  CopyWithCuda(from, from_offset, to, to_offset, nbytes, dev_from, dev_to, stream);
}

void CudaDeviceAPI::StreamSync(int32_t device_id, void* stream) {
  CudaRuntime& rt = Runtime();
  rt.MakeCurrent(rt.Device(device_id));
  CheckCu(rt.api().StreamSynchronize(ResolveStream(device_id, stream)), "cuStreamSynchronize");
}

void* CudaDeviceAPI::StreamCreate(int32_t device_id) {
  CudaRuntime& rt = Runtime();
  rt.MakeCurrent(rt.Device(device_id));
  CUstream s = nullptr;
  // Non-blocking: work on it does not serialise with the legacy default stream.
  CheckCu(rt.api().StreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return s;
}

void CudaDeviceAPI::StreamFree(int32_t device_id, void* stream) {
  if (stream == nullptr) return;  // the default stream is not ours to destroy
  CudaRuntime& rt = Runtime();
  // Device() first, in its own statement: it loads the driver or throws why there is none, and
  // only then is api() bound (argument order is unspecified; UBSan caught a null reference).
  CudaDevice& device = rt.Device(device_id);
  ScopedContext scope(rt.api(), rt.Context(device));
  CUresult rc = rt.api().StreamDestroy(static_cast<CUstream>(stream));
  if (!IsShutdownError(rc)) CheckCu(rc, "cuStreamDestroy");
}

void CudaDeviceAPI::SyncStreamFromTo(int32_t device_id, void* src, void* dst) {
  CUstream s = ResolveStream(device_id, src);
  CUstream d = ResolveStream(device_id, dst);
  if (s == d) return;  // one stream is already ordered
  CudaRuntime& rt = Runtime();
  rt.MakeCurrent(rt.Device(device_id));
  const CuApi& api = rt.api();
  // Later work on `dst` waits for everything queued on `src` so far, without blocking the host.
  CUevent event = nullptr;
  CheckCu(api.EventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUresult rc = api.EventRecord(event, s);
  if (rc == CUDA_SUCCESS) rc = api.StreamWaitEvent(d, event, 0);
  // Destroying a recorded event is safe: the driver releases it once it completes.
  api.EventDestroy(event);
  CheckCu(rc, "cuEventRecord/cuStreamWaitEvent");
}

Any CudaDeviceAPI::DeviceTargetProperty(int32_t device_id, const std::string& key) {
  CudaRuntime& rt = Runtime();
  CudaDevice& d = rt.Device(device_id);
  struct Entry {
    const char* key;
    CUdevice_attribute attr;
  };
  static const Entry kAttributes[] = {
      {"max_threads_per_block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {"thread_warp_size", CU_DEVICE_ATTRIBUTE_WARP_SIZE},
      {"max_shared_memory_per_block", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
      {"max_shared_memory_per_block_optin", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {"max_shared_memory_per_multiprocessor",
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
      {"registers_per_block", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {"registers_per_multiprocessor", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
      {"max_threads_per_multiprocessor", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
      {"multi_processor_count", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {"l2_cache_size_bytes", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
  };
  if (key == "arch") return String("sm_" + std::to_string(d.sm()));
  if (key == "compute_capability") return String(ComputeVersion(d));
  for (const Entry& e : kAttributes) {
    if (key == e.key) return static_cast<int64_t>(d.Attribute(e.attr));
  }
  return Any();
}

// ------------------------------------------------------------------------------- cuda_host

CudaHostDeviceAPI::CudaHostDeviceAPI()
    : PinnedHostMemory({"CUDA pinned host memory", SyncPinnedMemoryUsers, CopyWithCuda}) {}

void* CudaHostDeviceAPI::AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                                   DLDataType type_hint) {
  CudaRuntime& rt = Runtime();
  // Page-locking needs a context; portable memory is usable from every device's context.
  CudaDevice& device = rt.Device(0);  // before api(): see StreamFree
  ScopedContext scope(rt.api(), rt.Context(device));
  void* ptr = nullptr;
  CheckCu(rt.api().MemHostAlloc(&ptr, static_cast<size_t>(std::max<uint64_t>(nbytes, 1)),
                                kMemHostAllocPortable),
          "cuMemHostAlloc(" + std::to_string(nbytes) + " bytes)");
  return ptr;
}

void CudaHostDeviceAPI::FreeData(int32_t device_id, void* data) {
  if (data == nullptr) return;
  CudaRuntime& rt = Runtime();
  CudaDevice& device = rt.Device(0);  // before api(): see StreamFree
  ScopedContext scope(rt.api(), rt.Context(device));
  CUresult rc = rt.api().MemFreeHost(data);
  if (!IsShutdownError(rc)) CheckCu(rc, "cuMemFreeHost");
}

}  // namespace cuda
}  // namespace tvm_runtime
