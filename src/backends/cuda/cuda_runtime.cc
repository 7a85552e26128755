#include "cuda_runtime.h"

#include <cstdlib>
#include <memory>

#include "cuda_error.h"
#include "cuda_library.h"

namespace tvm_runtime {
namespace cuda {

namespace {

std::string VersionString(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Why cuInit failed, in terms of what the user can change.
std::string InitFailureHint(CUresult result) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  switch (result) {
    case CUDA_ERROR_NO_DEVICE:
      if (visible != nullptr) {
        return " CUDA_VISIBLE_DEVICES=\"" + std::string(visible) +
               "\" hides every GPU; unset it or list a valid device.";
      }
      return " The driver sees no NVIDIA GPU (check `nvidia-smi`; in a container, start it with "
             "GPU access).";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return " The kernel-mode driver and libcuda.so.1 come from different driver versions; "
             "reinstall the NVIDIA driver (and reboot).";
    case CUDA_ERROR_SYSTEM_NOT_READY:
      return " The driver's system services are not ready (on NVSwitch systems, start "
             "nvidia-fabricmanager).";
    default:
      return "";
  }
}

}  // namespace

int CudaDevice::Attribute(CUdevice_attribute attr, int fallback) const {
  int value = 0;
  const CuApi& api = CudaRuntime::Global().api();
  return api.DeviceGetAttribute(&value, attr, handle) == CUDA_SUCCESS ? value : fallback;
}

std::string CudaRuntime::Discover(DeviceList* out) {
  const CudaLibrary& driver = GetCudaLibrary();
  if (driver.api == nullptr) return driver.failure;
  api_ = driver.api;
  const CuApi& api = *api_;
  if (api.DriverGetVersion(&driver_version_) != CUDA_SUCCESS) driver_version_ = 0;
  std::string where =
      "the NVIDIA driver (" + driver.path + ", CUDA " + VersionString(driver_version_) + ")";
  CUresult rc = api.Init(0);
  if (rc != CUDA_SUCCESS) {
    return where + " failed to initialise: cuInit returned " + CuErrorString(rc) + "." +
           InitFailureHint(rc);
  }
  int count = 0;
  CheckCu(api.DeviceGetCount(&count), "cuDeviceGetCount");
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<CudaDevice>();
    d->id = i;
    CheckCu(api.DeviceGet(&d->handle, i), "cuDeviceGet");
    char name[256] = {0};
    if (api.DeviceGetName(name, sizeof(name) - 1, d->handle) == CUDA_SUCCESS) d->name = name;
    CheckCu(api.DeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                   d->handle),
            "cuDeviceGetAttribute(compute capability)");
    CheckCu(api.DeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                   d->handle),
            "cuDeviceGetAttribute(compute capability)");
    out->push_back(std::move(d));
  }
  if (out->empty())
    return where + " reports no CUDA device." + InitFailureHint(CUDA_ERROR_NO_DEVICE);
  return "";
}

CUcontext CudaRuntime::RetainContext(CudaDevice& device) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  CUcontext ctx = device.context.load(std::memory_order_relaxed);
  if (ctx == nullptr) {
    CheckCu(api_->DevicePrimaryCtxRetain(&ctx, device.handle),
            "cuDevicePrimaryCtxRetain for CUDA device " + std::to_string(device.id) + " (" +
                device.name + ")");
    device.context.store(ctx, std::memory_order_release);
  }
  return ctx;
}

void CudaRuntime::SetCurrent(CUcontext ctx) {
  CheckCu(api_->CtxSetCurrent(ctx), "cuCtxSetCurrent");
}

ScopedContext::ScopedContext(const CuApi& api, CUcontext ctx) : api_(api) {
  pushed_ = ctx != nullptr && api_.CtxPushCurrent(ctx) == CUDA_SUCCESS;
}

ScopedContext::~ScopedContext() {
  if (pushed_) {
    CUcontext popped = nullptr;
    api_.CtxPopCurrent(&popped);
  }
}

}  // namespace cuda
}  // namespace tvm_runtime
