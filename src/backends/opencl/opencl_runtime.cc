#include "opencl_runtime.h"

#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cl_error.h"
#include "cl_library.h"

namespace tvm_runtime {
namespace opencl {

namespace {

template <typename T>
T DeviceInfo(const ClApi& cl, cl_device_id dev, cl_device_info what) {
  T value{};
  if (cl.GetDeviceInfo(dev, what, sizeof(T), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

std::string DeviceInfoString(const ClApi& cl, cl_device_id dev, cl_device_info what) {
  size_t size = 0;
  if (cl.GetDeviceInfo(dev, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string out(size, '\0');
  if (cl.GetDeviceInfo(dev, what, size, &out[0], nullptr) != CL_SUCCESS) return "";
  out.resize(std::strlen(out.c_str()));  // drop the NUL terminator(s)
  return out;
}

std::string PlatformInfoString(const ClApi& cl, cl_platform_id p, cl_platform_info what,
                               const char* fallback) {
  char buf[512] = {0};
  if (cl.GetPlatformInfo(p, what, sizeof(buf) - 1, buf, nullptr) != CL_SUCCESS) return fallback;
  return buf;
}

// "OpenCL 3.0 <vendor info>" -> 300.
int ParseOpenCLVersion(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return 0;
  return major * 100 + minor * 10;
}

// GPUs first, so that tvm.opencl(0) is the GPU on a machine that also has a CPU driver.
int TypeRank(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return 0;
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return 1;
  if (t & CL_DEVICE_TYPE_CPU) return 3;
  return 2;
}

ClDevice Describe(const ClApi& cl, cl_platform_id platform, cl_device_id id,
                  const std::string& platform_name) {
  ClDevice d;
  d.platform = platform;
  d.id = id;
  d.platform_name = platform_name;
  d.platform_version = PlatformInfoString(cl, platform, CL_PLATFORM_VERSION, "");
  d.name = DeviceInfoString(cl, id, CL_DEVICE_NAME);
  d.vendor = DeviceInfoString(cl, id, CL_DEVICE_VENDOR);
  d.version = DeviceInfoString(cl, id, CL_DEVICE_VERSION);
  d.driver_version = DeviceInfoString(cl, id, CL_DRIVER_VERSION);
  d.extensions = " " + DeviceInfoString(cl, id, CL_DEVICE_EXTENSIONS) + " ";
  d.type = DeviceInfo<cl_device_type>(cl, id, CL_DEVICE_TYPE);
  d.opencl_version = ParseOpenCLVersion(d.version);
  d.max_work_group_size = DeviceInfo<size_t>(cl, id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  cl_uint dims = DeviceInfo<cl_uint>(cl, id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  d.max_work_item_sizes.assign(std::min<cl_uint>(dims, 16), 0);
  if (!d.max_work_item_sizes.empty()) {
    cl.GetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                     d.max_work_item_sizes.size() * sizeof(size_t), d.max_work_item_sizes.data(),
                     nullptr);
  }
  d.compute_units = DeviceInfo<cl_uint>(cl, id, CL_DEVICE_MAX_COMPUTE_UNITS);
  d.clock_mhz = DeviceInfo<cl_uint>(cl, id, CL_DEVICE_MAX_CLOCK_FREQUENCY);
  d.local_mem_size = DeviceInfo<cl_ulong>(cl, id, CL_DEVICE_LOCAL_MEM_SIZE);
  d.global_mem_size = DeviceInfo<cl_ulong>(cl, id, CL_DEVICE_GLOBAL_MEM_SIZE);
  d.global_mem_cache_size = DeviceInfo<cl_ulong>(cl, id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
  d.max_mem_alloc_size = DeviceInfo<cl_ulong>(cl, id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  return d;
}

std::string IcdVendorsHint() {
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  std::string where = vendors != nullptr ? std::string("OCL_ICD_VENDORS=") + vendors
                                         : std::string("/etc/OpenCL/vendors");
  return "no OpenCL driver (ICD) is registered in " + where +
         ". Install one: apt-get install pocl-opencl-icd (CPU), or the GPU vendor's OpenCL "
         "driver (NVIDIA, AMD ROCm, intel-opencl-icd).";
}

}  // namespace

cl_command_queue_properties QueueProperties() {
  static const cl_command_queue_properties props = [] {
    const char* v = std::getenv("TVM_OPENCL_QUEUE_PROFILING");
    return v != nullptr && std::strcmp(v, "0") == 0 ? cl_command_queue_properties{0}
                                                    : CL_QUEUE_PROFILING_ENABLE;
  }();
  return props;
}

bool ClDevice::HasExtension(const char* ext) const {
  return extensions.find(" " + std::string(ext) + " ") != std::string::npos;
}

std::string OpenCLRuntime::Discover(DeviceList* out) {
  const ClLibrary& lib = GetClLibrary();
  if (lib.api == nullptr) return lib.failure;
  api_ = lib.api;
  const ClApi& cl = *api_;

  cl_uint num_platforms = 0;
  cl_int err = cl.GetPlatformIDs(0, nullptr, &num_platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && num_platforms == 0)) {
    return "the OpenCL ICD loader (" + lib.path + ") found no platform: " + IcdVendorsHint();
  }
  CheckCl(err, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(num_platforms);
  CheckCl(cl.GetPlatformIDs(num_platforms, platforms.data(), nullptr), "clGetPlatformIDs");

  std::string notes;
  for (cl_platform_id p : platforms) {
    std::string pname = PlatformInfoString(cl, p, CL_PLATFORM_NAME, "(unnamed platform)");
    cl_uint n = 0;
    err = cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (err != CL_SUCCESS || n == 0) {
      notes += "\n  platform '" + pname + "': no devices (" + ClErrorString(err) + ")";
      continue;
    }
    std::vector<cl_device_id> ids(n);
    CheckCl(cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr), "clGetDeviceIDs");
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(p), 0};
    cl_context ctx = cl.CreateContext(props, n, ids.data(), nullptr, nullptr, &err);
    if (err != CL_SUCCESS || ctx == nullptr) {
      notes += "\n  platform '" + pname + "': clCreateContext failed (" + ClErrorString(err) + ")";
      continue;
    }
    for (cl_device_id id : ids) {
      auto d = std::make_unique<ClDevice>(Describe(cl, p, id, pname));
      d->context = ctx;
      d->queue = cl.CreateCommandQueue(ctx, id, QueueProperties(), &err);
      if (err != CL_SUCCESS || d->queue == nullptr) {
        notes += "\n  device '" + d->name + "': clCreateCommandQueue failed (" +
                 ClErrorString(err) + ")";
        continue;
      }
      out->push_back(std::move(d));
    }
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const std::unique_ptr<ClDevice>& a, const std::unique_ptr<ClDevice>& b) {
                     return TypeRank(a->type) < TypeRank(b->type);
                   });
  if (out->empty()) {
    return "the OpenCL ICD loader (" + lib.path + ") found " + std::to_string(platforms.size()) +
           " platform(s) but no usable device:" + notes;
  }
  return "";
}

}  // namespace opencl
}  // namespace tvm_runtime
