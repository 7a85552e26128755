#include "rocm_runtime.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "hip_error.h"
#include "hip_library.h"

namespace tvm_runtime {
namespace rocm {

namespace {

// HIP encodes versions as major * 10000000 + minor * 100000 + patch.
std::string VersionString(int version) {
  return std::to_string(version / 10000000) + "." + std::to_string(version / 100000 % 100);
}

// Why no device is visible, in terms of what the user can change.
std::string NoDeviceHint() {
  for (const char* var : {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    const char* visible = std::getenv(var);
    if (visible != nullptr) {
      return std::string(" ") + var + "=\"" + visible +
             "\" hides every GPU; unset it or list a valid device.";
    }
  }
  return " Check `rocminfo` (the amdgpu kernel driver must be loaded and /dev/kfd accessible: add "
         "the user to the `render` and `video` groups; in a container, pass --device=/dev/kfd "
         "--device=/dev/dri).";
}

std::string GcnArchName(const HipApi& api, int device_id) {
  std::vector<char> prop(kDevicePropBufferSize, 0);
  CheckHip(api.GetDevicePropertiesR0600(prop.data(), device_id), "hipGetDeviceProperties");
  const char* arch = prop.data() + kDevicePropR0600GcnArchNameOffset;
  return std::string(arch, strnlen(arch, 256));
}

}  // namespace

int RocmDevice::Attribute(int attribute, int fallback) const {
  int value = 0;
  const HipApi& api = RocmRuntime::Global().api();
  return api.DeviceGetAttribute(&value, attribute, id) == hipSuccess ? value : fallback;
}

std::string RocmDevice::Describe() const {
  return "ROCm device " + std::to_string(id) + " (" + name + ", " + gcn_arch + ")";
}

std::string RocmRuntime::Discover(DeviceList* out) {
  const HipLibrary& lib = GetHipLibrary();
  if (lib.api == nullptr) return lib.failure;
  api_ = lib.api;
  const HipApi& api = *api_;
  if (api.RuntimeGetVersion(&runtime_version_) != hipSuccess) runtime_version_ = 0;
  std::string where =
      "the HIP runtime (" + lib.path + ", ROCm " + VersionString(runtime_version_) + ")";
  hipError_t rc = api.Init(0);
  if (rc == hipErrorNoDevice) return where + " reports no AMD GPU." + NoDeviceHint();
  if (rc != hipSuccess) {
    return where + " failed to initialise: hipInit returned " + HipErrorString(rc) + "." +
           NoDeviceHint();
  }
  if (api.DriverGetVersion(&driver_version_) != hipSuccess) driver_version_ = 0;
  int count = 0;
  rc = api.GetDeviceCount(&count);
  if (rc == hipErrorNoDevice || (rc == hipSuccess && count == 0)) {
    return where + " reports no AMD GPU." + NoDeviceHint();
  }
  CheckHip(rc, "hipGetDeviceCount");
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<RocmDevice>();
    d->id = i;
    char name[256] = {0};
    if (api.DeviceGetName(name, sizeof(name) - 1, i) == hipSuccess) d->name = name;
    d->gcn_arch = GcnArchName(api, i);
    CheckHip(api.DeviceGetAttribute(&d->warp_size, hipDeviceAttributeWarpSize, i),
             "hipDeviceGetAttribute(warp size)");
    out->push_back(std::move(d));
  }
  return "";
}

void RocmRuntime::MakeCurrent(const RocmDevice& device) {
  int current = -1;
  if (api_->GetDevice(&current) == hipSuccess && current == device.id) return;
  CheckHip(api_->SetDevice(device.id), "hipSetDevice(" + std::to_string(device.id) + ")");
}

}  // namespace rocm
}  // namespace tvm_runtime
