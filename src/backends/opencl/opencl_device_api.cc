#include "opencl_device_api.h"

#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/current_device.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cl_error.h"
#include "opencl_buffer.h"
#include "opencl_runtime.h"
#include "opencl_timer.h"

namespace tvm_runtime {
namespace opencl {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::String;

OpenCLRuntime& Runtime() { return OpenCLRuntime::Global(); }

// An explicit stream handle, where NULL names the device's default queue.
cl_command_queue QueueOrDefault(const ClDevice& d, void* stream) {
  return stream != nullptr ? static_cast<cl_command_queue>(stream) : d.queue;
}

// Copies: NULL means the thread's current stream, so that a copy is ordered after the kernels
// launched on it (OpenCL queues, unlike CUDA's legacy default stream, do not order each other).
cl_command_queue QueueOrCurrent(int32_t device_id, const ClDevice& d, void* stream) {
  return stream != nullptr ? static_cast<cl_command_queue>(stream) : CurrentQueue(device_id, d);
}

/* Enqueues one command through `enqueue(queue, event)`, checked, and hands its event to the
 * timers recording the queue (opencl_timer.h). */
template <typename Enqueue>
void EnqueueTimed(cl_command_queue queue, const char* what, Enqueue&& enqueue) {
  CommandEvent event(queue);
  CheckCl(enqueue(queue, event.slot()), what);
  event.Done();
}

void CheckRange(const BufferDescriptor* buf, uint64_t offset, uint64_t nbytes, const char* side) {
  backend::CheckCopyRange(buf, buf != nullptr ? buf->nbytes : 0, offset, nbytes, side, "OpenCL");
}

std::string ComputeVersion(const ClDevice& d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%d.%d", d.opencl_version / 100, d.opencl_version % 100 / 10);
  return buf;
}

const char* DeviceTypeName(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  return "custom";
}

}  // namespace

void OpenCLDeviceAPI::SelectDevice(int32_t device_id) {
  Runtime().Device(device_id);  // validates, and initializes OpenCL on first use
}

Any OpenCLDeviceAPI::DeviceAttr(int32_t device_id, int32_t kind) {
  OpenCLRuntime& rt = Runtime();
  const ClDevice& d = rt.Device(device_id);
  switch (kind) {
    case kTVMRuntimeAttrMaxThreadsPerBlock:
      return static_cast<int64_t>(d.max_work_group_size);
    case kTVMRuntimeAttrWarpSize:
      // OpenCL has no warps that TVM's OpenCL codegen relies on (its thread_warp_size is 1).
      return static_cast<int64_t>(1);
    case kTVMRuntimeAttrMaxSharedMemoryPerBlock:
      return static_cast<int64_t>(d.local_mem_size);
    case kTVMRuntimeAttrComputeVersion:
      return String(ComputeVersion(d));
    case kTVMRuntimeAttrDeviceName:
      return String(d.name);
    case kTVMRuntimeAttrMaxClockRate:
      // OpenCL reports MHz; TVM's CUDA/ROCm report kHz, so convert for uniform units.
      return static_cast<int64_t>(d.clock_mhz) * 1000;
    case kTVMRuntimeAttrMultiProcessorCount:
      return static_cast<int64_t>(d.compute_units);
    case kTVMRuntimeAttrMaxThreadDimensions:
      return String(
          backend::JsonIntList(d.max_work_item_sizes.data(), d.max_work_item_sizes.size()));
    case kTVMRuntimeAttrApiVersion:
      return static_cast<int64_t>(d.opencl_version);
    case kTVMRuntimeAttrDriverVersion:
      return String(d.driver_version);
    case kTVMRuntimeAttrL2CacheSizeBytes:
      return static_cast<int64_t>(d.global_mem_cache_size);
    case kTVMRuntimeAttrTotalGlobalMemory:
      return static_cast<int64_t>(d.global_mem_size);
    case kTVMRuntimeAttrImagePitchAlignment: {
      cl_uint align = 0;
      if (rt.api().GetDeviceInfo(d.id, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof(align), &align,
                                 nullptr) != CL_SUCCESS) {
        return Any();
      }
      return static_cast<int64_t>(align);
    }
    default:
      // Registers per block, GCN arch and free memory have no OpenCL query.
      return Any();
  }
}

void* OpenCLDeviceAPI::AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                                 DLDataType type_hint) {
  OpenCLRuntime& rt = Runtime();
  const ClDevice& d = rt.Device(device_id);
  cl_int err = CL_SUCCESS;
  // Zero-byte buffers are invalid in OpenCL; a 1-byte one keeps `data` non-NULL as TVM expects.
  size_t size = static_cast<size_t>(std::max<uint64_t>(nbytes, 1));
  cl_mem mem = rt.api().CreateBuffer(d.context, CL_MEM_READ_WRITE, size, nullptr, &err);
  if (err != CL_SUCCESS || mem == nullptr) {
    backend::ThrowError("RuntimeError", "OpenCL cannot allocate " + std::to_string(nbytes) +
                                            " bytes on device " + std::to_string(device_id) + " (" +
                                            d.name + "): " + ClErrorString(err) +
                                            "; the largest single allocation it allows is " +
                                            std::to_string(d.max_mem_alloc_size) + " bytes");
  }
  auto* buf = new BufferDescriptor();
  buf->buffer = mem;
  buf->device_id = device_id;
  buf->nbytes = nbytes;
  return buf;
}

void OpenCLDeviceAPI::FreeData(int32_t device_id, void* data) {
  BufferDescriptor* buf = AsBuffer(data);
  if (buf == nullptr) return;
  // The driver keeps the memory until queued commands that use it have finished.
  cl_int err = Runtime().api().ReleaseMemObject(buf->buffer);
  delete buf;
  CheckCl(err, "clReleaseMemObject");
}

void OpenCLDeviceAPI::CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                               uint64_t nbytes, DLDevice dev_from, DLDevice dev_to,
                               DLDataType type_hint, void* stream) {
  if (nbytes == 0) return;
  OpenCLRuntime& rt = Runtime();
  const ClApi& cl = rt.api();
  switch (backend::ClassifyCopy(dev_from, dev_to, kDeviceTypeOpenCL, "OpenCL")) {
    case backend::CopyDirection::kDeviceToDevice: {
      const BufferDescriptor* src = AsBuffer(from);
      const BufferDescriptor* dst = AsBuffer(to);
      CheckRange(src, from_offset, nbytes, "source");
      CheckRange(dst, to_offset, nbytes, "destination");
      const ClDevice& ds = rt.Device(dev_from.device_id);
      const ClDevice& dd = rt.Device(dev_to.device_id);
      cl_command_queue queue = QueueOrCurrent(dev_from.device_id, ds, stream);
      if (ds.context == dd.context) {
        EnqueueTimed(queue, "clEnqueueCopyBuffer", [&](cl_command_queue q, cl_event* ev) {
          return cl.EnqueueCopyBuffer(q, src->buffer, dst->buffer, from_offset, to_offset, nbytes,
                                      0, nullptr, ev);
        });
        return;
      }
      // Devices of different platforms share no context: stage through host memory.
      std::vector<char> staging(nbytes);
      EnqueueTimed(queue, "clEnqueueReadBuffer", [&](cl_command_queue q, cl_event* ev) {
        return cl.EnqueueReadBuffer(q, src->buffer, CL_TRUE, from_offset, nbytes, staging.data(), 0,
                                    nullptr, ev);
      });
      EnqueueTimed(QueueOrCurrent(dev_to.device_id, dd, nullptr), "clEnqueueWriteBuffer",
                   [&](cl_command_queue q, cl_event* ev) {
                     return cl.EnqueueWriteBuffer(q, dst->buffer, CL_TRUE, to_offset, nbytes,
                                                  staging.data(), 0, nullptr, ev);
                   });
      return;
    }
    case backend::CopyDirection::kDeviceToHost: {
      const BufferDescriptor* src = AsBuffer(from);
      CheckRange(src, from_offset, nbytes, "source");
      const ClDevice& ds = rt.Device(dev_from.device_id);
      EnqueueTimed(QueueOrCurrent(dev_from.device_id, ds, stream), "clEnqueueReadBuffer",
                   [&](cl_command_queue q, cl_event* ev) {
                     return cl.EnqueueReadBuffer(q, src->buffer, CL_TRUE, from_offset, nbytes,
                                                 static_cast<char*>(to) + to_offset, 0, nullptr,
                                                 ev);
                   });
      return;
    }
    case backend::CopyDirection::kHostToDevice: {
      const BufferDescriptor* dst = AsBuffer(to);
      CheckRange(dst, to_offset, nbytes, "destination");
      const ClDevice& dd = rt.Device(dev_to.device_id);
      // Blocking, so the caller may reuse or free the host memory as soon as this returns.
      EnqueueTimed(QueueOrCurrent(dev_to.device_id, dd, stream), "clEnqueueWriteBuffer",
                   [&](cl_command_queue q, cl_event* ev) {
                     return cl.EnqueueWriteBuffer(q, dst->buffer, CL_TRUE, to_offset, nbytes,
                                                  static_cast<const char*>(from) + from_offset, 0,
                                                  nullptr, ev);
                   });
      return;
    }
  }
}

void OpenCLDeviceAPI::StreamSync(int32_t device_id, void* stream) {
  OpenCLRuntime& rt = Runtime();
  const ClDevice& d = rt.Device(device_id);
  const ClApi& cl = rt.api();
  if (stream != nullptr) {
    CheckCl(cl.Finish(static_cast<cl_command_queue>(stream)), "clFinish");
    return;
  }
  // NULL: the default queue and, if one is set, the thread's current stream (like CUDA's
  // legacy default stream, which waits for the other streams too).
  CheckCl(cl.Finish(d.queue), "clFinish");
  cl_command_queue current = CurrentQueue(device_id, d);
  if (current != d.queue) CheckCl(cl.Finish(current), "clFinish");
}

void* OpenCLDeviceAPI::StreamCreate(int32_t device_id) {
  OpenCLRuntime& rt = Runtime();
  const ClDevice& d = rt.Device(device_id);
  cl_int err = CL_SUCCESS;
  cl_command_queue q = rt.api().CreateCommandQueue(d.context, d.id, QueueProperties(), &err);
  CheckCl(err, "clCreateCommandQueue");
  return q;
}

void OpenCLDeviceAPI::StreamFree(int32_t device_id, void* stream) {
  if (stream == nullptr) return;  // the default queue belongs to the runtime
  const ClApi& cl = Runtime().api();
  auto q = static_cast<cl_command_queue>(stream);
  CheckCl(cl.Finish(q), "clFinish");
  CheckCl(cl.ReleaseCommandQueue(q), "clReleaseCommandQueue");
}

void OpenCLDeviceAPI::SyncStreamFromTo(int32_t device_id, void* src, void* dst) {
  OpenCLRuntime& rt = Runtime();
  const ClDevice& d = rt.Device(device_id);
  cl_command_queue qs = QueueOrDefault(d, src);
  cl_command_queue qd = QueueOrDefault(d, dst);
  if (qs == qd) return;  // in-order queue: already ordered
  const ClApi& cl = rt.api();
  if (cl.EnqueueMarkerWithWaitList == nullptr || cl.EnqueueBarrierWithWaitList == nullptr) {
    CheckCl(cl.Finish(qs), "clFinish");  // OpenCL 1.1 loader: wait on the host instead
    return;
  }
  // Make later work on `dst` wait for everything queued on `src` so far, without blocking.
  cl_event marker = nullptr;
  CheckCl(cl.EnqueueMarkerWithWaitList(qs, 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
  cl_int err = cl.EnqueueBarrierWithWaitList(qd, 1, &marker, nullptr);
  cl.ReleaseEvent(marker);
  CheckCl(err, "clEnqueueBarrierWithWaitList");
}

Any OpenCLDeviceAPI::DeviceTargetProperty(int32_t device_id, const std::string& key) {
  OpenCLRuntime& rt = Runtime();
  const ClDevice& d = rt.Device(device_id);
  if (key == "supports_float16") {
    return d.HasExtension("cl_khr_fp16") || d.HasExtension("cl_amd_fp16");
  }
  if (key == "supports_float64") return d.HasExtension("cl_khr_fp64");
  if (key == "device_type") return String(DeviceTypeName(d.type));
  if (key == "vendor") return String(d.vendor);
  if (key == "platform_name") return String(d.platform_name);
  if (key == "device_version") return String(d.version);
  return Any();
}

}  // namespace opencl
}  // namespace tvm_runtime
