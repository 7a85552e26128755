/*
 * Process-wide OpenCL state: the loaded ICD, every device of every platform, one context per
 * platform and one default in-order command queue per device.  Discovered lazily on first device
 * use (backend::LazyDevices); a failure is remembered as text (for Device.exist == False and the
 * diagnostics), never thrown from the queries that report availability.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_RUNTIME_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_RUNTIME_H_

#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_runtime/backend/gpu/vendor_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cl_api.h"

namespace tvm_runtime {
namespace opencl {

constexpr int32_t kDeviceTypeOpenCL = 4;  // kDLOpenCL

// The properties of every queue this backend makes (the default ones, StreamCreate): profiling,
// so that runtime.timer.opencl reads per-command device times (opencl_timer.h says what it
// costs), unless $TVM_OPENCL_QUEUE_PROFILING=0 asks for the cheapest launches; the timer then
// falls back to the host clock between two clFinish.  Read once, at the first queue.
cl_command_queue_properties QueueProperties();

struct ClDevice {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;      // shared by the devices of one platform
  cl_command_queue queue = nullptr;  // default in-order queue (stream NULL)
  std::string name;
  std::string vendor;
  std::string platform_name;
  std::string platform_version;  // CL_PLATFORM_VERSION, e.g. "OpenCL 3.0 PoCL 3.1 ..."
  std::string version;           // CL_DEVICE_VERSION, e.g. "OpenCL 3.0 PoCL ..."
  std::string driver_version;
  std::string extensions;
  cl_device_type type = 0;
  int opencl_version = 0;  // major * 100 + minor * 10, e.g. 300
  size_t max_work_group_size = 0;
  std::vector<size_t> max_work_item_sizes;
  cl_uint compute_units = 0;
  cl_uint clock_mhz = 0;
  cl_ulong local_mem_size = 0;
  cl_ulong global_mem_size = 0;
  cl_ulong global_mem_cache_size = 0;
  cl_ulong max_mem_alloc_size = 0;

  bool HasExtension(const char* ext) const;
};

class OpenCLRuntime : public backend::VendorRuntime<OpenCLRuntime, ClDevice> {
 public:
  /* The device, or a RuntimeError/ValueError that says why it cannot be used. Hot path. */
  const ClDevice& Device(int32_t device_id) { return Discovered(device_id); }

  /* Valid once Available() returned true (or Device() returned). */
  const ClApi& api() const { return *api_; }

 private:
  friend class backend::VendorRuntime<OpenCLRuntime, ClDevice>;
  OpenCLRuntime() : VendorRuntime("OpenCL") {}
  std::string Discover(DeviceList* out);

  const ClApi* api_ = nullptr;  // set by Discover(), before discovery publishes its result
};

/* The queue work for `device_id` goes to on this thread: the stream set in tvm-ffi's stream
 * context (Device.set_raw_stream), else the device's default queue. */
inline cl_command_queue CurrentQueue(int32_t device_id, const ClDevice& device) {
  void* stream = TVMFFIEnvGetStream(kDeviceTypeOpenCL, device_id);
  return stream != nullptr ? static_cast<cl_command_queue>(stream) : device.queue;
}

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_RUNTIME_H_
