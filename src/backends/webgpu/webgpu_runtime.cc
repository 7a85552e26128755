#include "webgpu_runtime.h"

#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "webgpu_device.h"

namespace tvm_runtime {
namespace webgpu {

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/* Backends to enumerate: TVM_WEBGPU_BACKEND, else the native compute APIs (OpenGL's compute
 * support is partial, and probing it opens display connections on headless machines). */
WGPUFlags BackendMask(std::string* error) {
  const char* env = std::getenv(kBackendEnvVar);
  std::string want = env != nullptr ? Lower(env) : "";
  if (want.empty()) {
    return WGPUInstanceBackend_Vulkan | WGPUInstanceBackend_Metal | WGPUInstanceBackend_DX12;
  }
  if (want == "vulkan") return WGPUInstanceBackend_Vulkan;
  if (want == "metal") return WGPUInstanceBackend_Metal;
  if (want == "dx12" || want == "d3d12") return WGPUInstanceBackend_DX12;
  if (want == "gl" || want == "opengl" || want == "gles") return WGPUInstanceBackend_GL;
  *error = std::string(kBackendEnvVar) + "='" + env +
           "' is not a WebGPU backend; use vulkan, metal, dx12 or gl (or unset it)";
  return 0;
}

int TypeRank(WGPUAdapterType t) {
  switch (t) {
    case WGPUAdapterType_DiscreteGPU:
      return 0;
    case WGPUAdapterType_IntegratedGPU:
      return 1;
    case WGPUAdapterType_Unknown:
      return 2;
    default:
      return 3;  // CPU
  }
}

int BackendRank(WGPUBackendType b) {
  return (b == WGPUBackendType_OpenGL || b == WGPUBackendType_OpenGLES) ? 1 : 0;
}

}  // namespace

std::string ToString(WGPUStringView s) {
  if (s.data == nullptr) return std::string();
  if (s.length == kWgpuStrlen) return std::string(s.data);
  return std::string(s.data, s.length);
}

const char* AdapterInfo::BackendName() const {
  switch (backend) {
    case WGPUBackendType_Vulkan:
      return "Vulkan";
    case WGPUBackendType_Metal:
      return "Metal";
    case WGPUBackendType_D3D12:
      return "D3D12";
    case WGPUBackendType_D3D11:
      return "D3D11";
    case WGPUBackendType_OpenGL:
      return "OpenGL";
    case WGPUBackendType_OpenGLES:
      return "OpenGLES";
    case WGPUBackendType_WebGPU:
      return "WebGPU";
    case WGPUBackendType_Null:
      return "Null";
    default:
      return "unknown";
  }
}

const char* AdapterInfo::TypeName() const {
  switch (type) {
    case WGPUAdapterType_DiscreteGPU:
      return "discrete GPU";
    case WGPUAdapterType_IntegratedGPU:
      return "integrated GPU";
    case WGPUAdapterType_CPU:
      return "CPU";
    default:
      return "unknown";
  }
}

WebGPURuntime& WebGPURuntime::Global() {
  // Leaked on purpose: tensors and modules may be released by other libraries' static
  // destructors after ours would have run.
  static WebGPURuntime* rt = [] {
    WebGPURuntime* r = &VendorRuntime::Global();
    static struct ExitHook {
      WebGPURuntime* rt;
      ~ExitHook() { rt->OnExitHook(); }
    } hook{r};
    return r;
  }();
  return *rt;
}

void WebGPURuntime::OnExitHook() { shut_down_.store(true, std::memory_order_release); }

std::string WebGPURuntime::Discover(DeviceList* out) {
  const WgpuLibrary& lib = GetWgpuLibrary();
  if (!lib.ok()) return lib.error;
  const WgpuFunctions& f = lib.fn;
  std::string error;
  WGPUFlags backends = BackendMask(&error);
  if (!error.empty()) return error;
  instance_ = f.wgpuCreateInstance(nullptr);
  if (instance_ == nullptr) return "wgpu-native (" + lib.path + ") could not create an instance";
  WGPUInstanceEnumerateAdapterOptions options{nullptr, backends};
  size_t n = f.wgpuInstanceEnumerateAdapters(instance_, &options, nullptr);
  std::vector<WGPUAdapter> handles(n);
  if (n != 0) n = f.wgpuInstanceEnumerateAdapters(instance_, &options, handles.data());
  handles.resize(n);
  const char* name_filter = std::getenv(kAdapterEnvVar);
  std::string filter = name_filter != nullptr ? Lower(name_filter) : "";
  std::vector<std::unique_ptr<AdapterInfo>> found;
  std::string skipped;
  for (WGPUAdapter a : handles) {
    auto info = std::make_unique<AdapterInfo>();
    info->adapter = a;
    WGPUAdapterInfo raw{};
    if (f.wgpuAdapterGetInfo(a, &raw) == WGPUStatus_Success) {
      info->name = ToString(raw.device);
      info->vendor = ToString(raw.vendor);
      info->architecture = ToString(raw.architecture);
      info->description = ToString(raw.description);
      info->backend = raw.backendType;
      info->type = raw.adapterType;
      info->vendor_id = raw.vendorID;
      info->device_id = raw.deviceID;
      info->subgroup_min_size = raw.subgroupMinSize;
      info->subgroup_max_size = raw.subgroupMaxSize;
      f.wgpuAdapterInfoFreeMembers(raw);
    }
    if (f.wgpuAdapterGetLimits(a, &info->limits) != WGPUStatus_Success) {
      skipped += (skipped.empty() ? "" : "; ") + info->name + ": no limits reported";
      f.wgpuAdapterRelease(a);
      continue;
    }
    info->limits.nextInChain = nullptr;
    info->shader_f16 = f.wgpuAdapterHasFeature(a, WGPUFeatureName_ShaderF16) != 0;
    info->subgroups = f.wgpuAdapterHasFeature(a, WGPUFeatureName_Subgroups) != 0;
    if (!filter.empty() && Lower(info->name).find(filter) == std::string::npos) {
      skipped += (skipped.empty() ? "" : "; ") + info->name + " (" + kAdapterEnvVar + "='" +
                 name_filter + "')";
      f.wgpuAdapterRelease(a);
      continue;
    }
    found.push_back(std::move(info));
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
    int rx = TypeRank(x->type) * 2 + BackendRank(x->backend);
    int ry = TypeRank(y->type) * 2 + BackendRank(y->backend);
    return rx < ry;
  });
  if (found.size() > static_cast<size_t>(kMaxDevices)) found.resize(kMaxDevices);
  for (auto& info : found) out->push_back(std::move(info));
  if (!out->empty()) return std::string();
  std::string why = "wgpu-native " + lib.version + " (" + lib.path + ") found no adapter";
  if (!skipped.empty()) why += " (skipped: " + skipped + ")";
  return why +
         ". It needs a Vulkan, Metal or D3D12 driver; on Linux without a GPU install Mesa's "
         "lavapipe (apt-get install mesa-vulkan-drivers)";
}

WebGPUDevice& WebGPURuntime::CreateDevice(int32_t device_id) {
  const AdapterInfo& info = Info(device_id);  // throws for a missing device
  std::lock_guard<std::mutex> lock(device_mu_);
  WebGPUDevice* d = devices_[device_id].load(std::memory_order_acquire);
  if (d == nullptr) {
    d = new WebGPUDevice(device_id, info, instance_, fn());  // lives for the process
    devices_[device_id].store(d, std::memory_order_release);
  }
  return *d;
}

}  // namespace webgpu
}  // namespace tvm_runtime
