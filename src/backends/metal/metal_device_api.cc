#include "metal_device_api.h"

#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>

#include <algorithm>
#include <cstring>

#include "metal_messages.h"
#include "metal_runtime.h"

namespace tvm_runtime {
namespace metal {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::String;

// MTLResourceStorageModeShared | MTLResourceCPUCacheModeDefaultCache: one allocation the CPU
// and the GPU both address.  On Apple silicon (unified memory, the only platform this wheel is
// released for) that is the GPU's own memory, so copies to and from the host are a memcpy on
// `contents` after the stream is idle, with no staging buffer and no command buffer.
constexpr NSUInteger kSharedStorage = 0;

MetalRuntime& Runtime() { return MetalRuntime::Global(); }

id AsBuffer(const void* data) { return const_cast<void*>(data); }

/* The buffer's bytes, after checking that [offset, offset + nbytes) lies inside it. */
char* CheckedContents(const void* data, uint64_t offset, uint64_t nbytes, const char* side) {
  id buffer = AsBuffer(data);
  uint64_t length = buffer != nullptr ? msg::Length(buffer) : 0;
  backend::CheckCopyRange(buffer, length, offset, nbytes, side, "Metal");
  return static_cast<char*>(msg::Contents(buffer)) + offset;
}

}  // namespace

void MetalDeviceAPI::SelectDevice(int32_t device_id) {
  Runtime().Device(device_id);  // validates, and opens Metal on first use
}

Any MetalDeviceAPI::DeviceAttr(int32_t device_id, int32_t kind) {
  MetalRuntime& rt = Runtime();
  const MetalDevice& d = rt.Device(device_id);
  switch (kind) {
    case kTVMRuntimeAttrMaxThreadsPerBlock:
      return static_cast<int64_t>(d.max_threads_per_threadgroup.width);
    case kTVMRuntimeAttrWarpSize:
#if defined(__aarch64__)
      // Apple GPUs run SIMD-groups of 32 threads.
      return static_cast<int64_t>(32);
#else
      // Intel and AMD GPUs of x86_64 Macs vary; apache-tvm reports 1 there too.
      return static_cast<int64_t>(1);
#endif
    case kTVMRuntimeAttrMaxSharedMemoryPerBlock:
      return static_cast<int64_t>(d.max_threadgroup_memory);
    case kTVMRuntimeAttrComputeVersion:
      // The Metal Shading Language version kernels are compiled with on this device.
      return String(d.LanguageVersionText());
    case kTVMRuntimeAttrDeviceName:
      return String(d.name);
    case kTVMRuntimeAttrMaxThreadDimensions: {
      const size_t dims[3] = {d.max_threads_per_threadgroup.width,
                              d.max_threads_per_threadgroup.height,
                              d.max_threads_per_threadgroup.depth};
      return String(backend::JsonIntList(dims, 3));
    }
    case kTVMRuntimeAttrTotalGlobalMemory:
      return static_cast<int64_t>(d.working_set_size);
    default:
      // Clock rate, core count, registers, driver version... Metal has no query for them.
      return Any();
  }
}

void* MetalDeviceAPI::AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                                DLDataType type_hint) {
  MetalRuntime& rt = Runtime();
  const MetalDevice& d = rt.Device(device_id);
  AutoreleasePool pool(rt.api());
  // A zero-length MTLBuffer is nil; one byte keeps `data` non-NULL as TVM expects.
  id buffer = msg::NewBufferWithLength(d.device, std::max<uint64_t>(nbytes, 1), kSharedStorage);
  if (buffer == nullptr) {
    backend::ThrowError("RuntimeError", "Metal cannot allocate " + std::to_string(nbytes) +
                                            " bytes on device " + std::to_string(device_id) + " (" +
                                            d.name + "); its recommended working set is " +
                                            std::to_string(d.working_set_size) +
                                            " bytes: free tensors or use a smaller model or batch");
  }
  return buffer;
}

void MetalDeviceAPI::FreeData(int32_t device_id, void* data) {
  // No wait: a committed command buffer keeps the buffers it uses alive until it completes.
  if (data != nullptr) msg::Release(AsBuffer(data));
}

void MetalDeviceAPI::CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                              uint64_t nbytes, DLDevice dev_from, DLDevice dev_to,
                              DLDataType type_hint, void* stream) {
  if (nbytes == 0) return;
  MetalRuntime& rt = Runtime();
  switch (backend::ClassifyCopy(dev_from, dev_to, kDeviceTypeMetal, "Metal")) {
    case backend::CopyDirection::kDeviceToDevice: {
      CheckedContents(from, from_offset, nbytes, "source");
      CheckedContents(to, to_offset, nbytes, "destination");
      MetalStream* s = rt.StreamOrCurrent(dev_from.device_id, stream);
      s->counters.gpu_to_gpu++;
      if (dev_from.device_id == dev_to.device_id) {
        // A blit on the stream: ordered after the kernels queued there, no host wait.
        s->Blit(AsBuffer(from), from_offset, AsBuffer(to), to_offset, nbytes);
        return;
      }
      // Two devices share no queue: wait for both, then copy through the shared storage.
      s->Synchronize();
      rt.CurrentStream(dev_to.device_id)->Synchronize();
      std::memcpy(CheckedContents(to, to_offset, nbytes, "destination"),
                  CheckedContents(from, from_offset, nbytes, "source"), nbytes);
      return;
    }
    case backend::CopyDirection::kDeviceToHost: {
      const char* src = CheckedContents(from, from_offset, nbytes, "source");
      MetalStream* s = rt.StreamOrCurrent(dev_from.device_id, stream);
      s->counters.gpu_to_cpu++;
      s->Synchronize();  // the kernels writing the buffer must have finished
      std::memcpy(static_cast<char*>(to) + to_offset, src, nbytes);
      return;
    }
    case backend::CopyDirection::kHostToDevice: {
      char* dst = CheckedContents(to, to_offset, nbytes, "destination");
      MetalStream* s = rt.StreamOrCurrent(dev_to.device_id, stream);
      s->counters.cpu_to_gpu++;
      s->Synchronize();  // kernels queued earlier may still read the old contents
      std::memcpy(dst, static_cast<const char*>(from) + from_offset, nbytes);
      return;
    }
  }
}

void MetalDeviceAPI::StreamSync(int32_t device_id, void* stream) {
  MetalRuntime& rt = Runtime();
  MetalDevice& d = rt.Device(device_id);
  if (stream != nullptr) {
    static_cast<MetalStream*>(stream)->Synchronize();
    return;
  }
  // NULL: the default stream and, if one is set, the thread's current stream.
  MetalStream* fallback = d.default_stream.load();
  fallback->Synchronize();
  MetalStream* current = rt.CurrentStream(device_id);
  if (current != fallback) current->Synchronize();
}

void* MetalDeviceAPI::StreamCreate(int32_t device_id) {
  MetalRuntime& rt = Runtime();
  const MetalDevice& d = rt.Device(device_id);
  id queue = msg::NewCommandQueue(d.device);
  if (queue == nullptr) {
    backend::ThrowError("RuntimeError", "Metal could not create a command queue on device " +
                                            std::to_string(device_id) + " (" + d.name + ")");
  }
  return new MetalStream(rt.api(), queue);
}

void MetalDeviceAPI::StreamFree(int32_t device_id, void* stream) {
  // NULL is the default stream, which belongs to the runtime.
  delete static_cast<MetalStream*>(stream);
}

void MetalDeviceAPI::SyncStreamFromTo(int32_t device_id, void* src, void* dst) {
  MetalRuntime& rt = Runtime();
  MetalStream* from = rt.StreamOrCurrent(device_id, src);
  MetalStream* to = rt.StreamOrCurrent(device_id, dst);
  // Command queues cannot wait for each other without shared events: wait on the host.
  if (from != to) from->Synchronize();
}

Any MetalDeviceAPI::DeviceTargetProperty(int32_t device_id, const std::string& key) {
  MetalRuntime& rt = Runtime();
  const MetalDevice& d = rt.Device(device_id);
  if (key == "unified_memory") return d.unified_memory;
  if (key == "language_version") return String(d.LanguageVersionText());
  return Any();
}

}  // namespace metal
}  // namespace tvm_runtime
