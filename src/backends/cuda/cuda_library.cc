#include "cuda_library.h"

#include <tvm_runtime/backend/vendor/vendor_library.h>

namespace tvm_runtime {
namespace cuda {

namespace {

using backend::SymbolResolver;

// Versioned names first: they are what cuda.h maps the plain names to for current callers.
void ResolveDriverApi(SymbolResolver& r, CuApi* api) {
  r.Required({"cuInit"}, &api->Init);
  r.Required({"cuDriverGetVersion"}, &api->DriverGetVersion);
  r.Required({"cuGetErrorName"}, &api->GetErrorName);
  r.Required({"cuGetErrorString"}, &api->GetErrorString);
  r.Required({"cuDeviceGetCount"}, &api->DeviceGetCount);
  r.Required({"cuDeviceGet"}, &api->DeviceGet);
  r.Required({"cuDeviceGetName"}, &api->DeviceGetName);
  r.Required({"cuDeviceGetAttribute"}, &api->DeviceGetAttribute);
  r.Required({"cuDeviceTotalMem_v2"}, &api->DeviceTotalMem);
  r.Required({"cuDevicePrimaryCtxRetain"}, &api->DevicePrimaryCtxRetain);
  r.Required({"cuCtxSetCurrent"}, &api->CtxSetCurrent);
  r.Required({"cuCtxGetCurrent"}, &api->CtxGetCurrent);
  r.Required({"cuCtxPushCurrent_v2"}, &api->CtxPushCurrent);
  r.Required({"cuCtxPopCurrent_v2"}, &api->CtxPopCurrent);
  r.Required({"cuMemAlloc_v2"}, &api->MemAlloc);
  r.Required({"cuMemFree_v2"}, &api->MemFree);
  r.Required({"cuMemGetInfo_v2"}, &api->MemGetInfo);
  r.Required({"cuMemHostAlloc"}, &api->MemHostAlloc);
  r.Required({"cuMemFreeHost"}, &api->MemFreeHost);
  r.Required({"cuMemcpyHtoDAsync_v2"}, &api->MemcpyHtoDAsync);
  r.Required({"cuMemcpyDtoHAsync_v2"}, &api->MemcpyDtoHAsync);
  r.Required({"cuMemcpyDtoDAsync_v2"}, &api->MemcpyDtoDAsync);
  r.Required({"cuMemcpyPeerAsync"}, &api->MemcpyPeerAsync);
  r.Required({"cuStreamCreate"}, &api->StreamCreate);
  r.Required({"cuStreamDestroy_v2"}, &api->StreamDestroy);
  r.Required({"cuStreamSynchronize"}, &api->StreamSynchronize);
  r.Required({"cuStreamWaitEvent"}, &api->StreamWaitEvent);
  r.Required({"cuEventCreate"}, &api->EventCreate);
  r.Required({"cuEventDestroy_v2"}, &api->EventDestroy);
  r.Required({"cuEventRecord"}, &api->EventRecord);
  r.Required({"cuEventSynchronize"}, &api->EventSynchronize);
  // CUDA 12.8 added _v2 (same signature); older drivers only have the original.
  r.Required({"cuEventElapsedTime_v2", "cuEventElapsedTime"}, &api->EventElapsedTime);
  r.Required({"cuModuleLoadDataEx"}, &api->ModuleLoadDataEx);
  r.Required({"cuModuleUnload"}, &api->ModuleUnload);
  r.Required({"cuModuleGetFunction"}, &api->ModuleGetFunction);
  r.Required({"cuFuncSetAttribute"}, &api->FuncSetAttribute);
  r.Required({"cuLaunchKernel"}, &api->LaunchKernel);
  r.Optional({"cuLaunchKernelEx"}, &api->LaunchKernelEx);
  // CUDA graphs: checked where used (cuda_graph.cc), so an older driver still runs the rest.
  r.Optional({"cuStreamBeginCapture_v2"}, &api->StreamBeginCapture);
  r.Optional({"cuStreamEndCapture"}, &api->StreamEndCapture);
  r.Optional({"cuGraphInstantiateWithFlags"}, &api->GraphInstantiateWithFlags);
  r.Optional({"cuGraphLaunch"}, &api->GraphLaunch);
  r.Optional({"cuGraphExecDestroy"}, &api->GraphExecDestroy);
  r.Optional({"cuGraphDestroy"}, &api->GraphDestroy);
  r.Optional({"cuTensorMapEncodeTiled"}, &api->TensorMapEncodeTiled);  // TMA (CUDA 12.0+)
  r.Optional({"cuStreamGetCtx"}, &api->StreamGetCtx);
}

}  // namespace

const CudaLibrary& GetCudaLibrary() {
  return backend::OpenVendorApiOnce<CuApi>(
      [] { return backend::VendorLibraryCandidates(kDriverLibraryEnvVar, {"libcuda.so.1"}); },
      ResolveDriverApi,
      [] {
        return backend::VendorApiMessages{
            "CUDA driver library",
            "tvm-runtime-cuda needs an NVIDIA driver for CUDA 11 or newer, and CUDA 13 "
            "kernels need R580+",
            "the NVIDIA driver library could not be opened",
            "Install the NVIDIA driver, which provides libcuda.so.1 (the CUDA toolkit alone does "
            "not); in a container, start it with GPU access (e.g. `docker run --gpus all` with the "
            "NVIDIA Container Toolkit); or set " +
                std::string(kDriverLibraryEnvVar) + " to the path of libcuda.so.1."};
      });
}

}  // namespace cuda
}  // namespace tvm_runtime
