#include "hip_library.h"

#include <cstdlib>

namespace tvm_runtime {
namespace rocm {

namespace {

using backend::SymbolResolver;

// ROCm 6 and 7 runtimes; the unversioned name is what ROCm's own lib/ directory always has.
constexpr const char* kSonames[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"};
constexpr const char* kDefaultPrefix = "/opt/rocm";

void ResolveAll(SymbolResolver& r, HipApi* api) {
  r.Required({"hipInit"}, &api->Init);
  r.Required({"hipDriverGetVersion"}, &api->DriverGetVersion);
  r.Required({"hipRuntimeGetVersion"}, &api->RuntimeGetVersion);
  r.Required({"hipGetErrorName"}, &api->GetErrorName);
  r.Required({"hipGetErrorString"}, &api->GetErrorString);
  r.Required({"hipGetDeviceCount"}, &api->GetDeviceCount);
  r.Required({"hipDeviceGetName"}, &api->DeviceGetName);
  r.Required({"hipDeviceGetAttribute"}, &api->DeviceGetAttribute);
  // The ROCm 6 layout of hipDeviceProp_t, the one whose gcnArchName offset we know.
  r.Required({"hipGetDevicePropertiesR0600"}, &api->GetDevicePropertiesR0600);
  r.Required({"hipDeviceTotalMem"}, &api->DeviceTotalMem);
  r.Required({"hipMemGetInfo"}, &api->MemGetInfo);
  r.Required({"hipSetDevice"}, &api->SetDevice);
  r.Required({"hipGetDevice"}, &api->GetDevice);
  r.Required({"hipMalloc"}, &api->Malloc);
  r.Required({"hipFree"}, &api->Free);
  r.Required({"hipHostMalloc"}, &api->HostMalloc);
  r.Required({"hipHostFree"}, &api->HostFree);
  r.Required({"hipMemcpyAsync"}, &api->MemcpyAsync);
  r.Required({"hipMemcpyPeerAsync"}, &api->MemcpyPeerAsync);
  r.Required({"hipStreamCreateWithFlags"}, &api->StreamCreateWithFlags);
  r.Required({"hipStreamDestroy"}, &api->StreamDestroy);
  r.Required({"hipStreamSynchronize"}, &api->StreamSynchronize);
  r.Required({"hipStreamWaitEvent"}, &api->StreamWaitEvent);
  r.Required({"hipEventCreateWithFlags"}, &api->EventCreateWithFlags);
  r.Required({"hipEventDestroy"}, &api->EventDestroy);
  r.Required({"hipEventRecord"}, &api->EventRecord);
  r.Required({"hipEventSynchronize"}, &api->EventSynchronize);
  r.Required({"hipEventElapsedTime"}, &api->EventElapsedTime);
  r.Required({"hipModuleLoadData"}, &api->ModuleLoadData);
  r.Required({"hipModuleUnload"}, &api->ModuleUnload);
  r.Required({"hipModuleGetFunction"}, &api->ModuleGetFunction);
  r.Required({"hipModuleLaunchKernel"}, &api->ModuleLaunchKernel);
}

}  // namespace

std::vector<std::string> HipLibraryCandidates() {
  const char* env = std::getenv(kHipLibraryEnvVar);
  if (env != nullptr && env[0] != '\0') return {env};
  std::vector<std::string> out;
  const char* rocm_path = std::getenv("ROCM_PATH");
  if (rocm_path != nullptr && rocm_path[0] != '\0') {
    out.push_back(std::string(rocm_path) + "/lib/libamdhip64.so");
  }
  for (std::string& c :
       backend::VendorLibraryCandidates(nullptr, {kSonames[0], kSonames[1], kSonames[2]})) {
    out.push_back(std::move(c));
  }
  out.push_back(std::string(kDefaultPrefix) + "/lib/libamdhip64.so");
  return out;
}

const HipLibrary& GetHipLibrary() {
  return backend::OpenVendorApiOnce<HipApi>(
      [] { return HipLibraryCandidates(); }, ResolveAll,
      [] {
        return backend::VendorApiMessages{
            "HIP runtime library", "tvm-runtime-rocm needs the HIP runtime of ROCm 6.0 or newer",
            "the HIP runtime library (libamdhip64.so) could not be opened",
            "Install ROCm 6.0 or newer (its HIP runtime: e.g. the `hip-runtime-amd` package), set "
            "ROCM_PATH to the ROCm installation, or set " +
                std::string(kHipLibraryEnvVar) + " to the path of libamdhip64.so."};
      });
}

}  // namespace rocm
}  // namespace tvm_runtime
