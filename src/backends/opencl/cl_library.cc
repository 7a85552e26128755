#include "cl_library.h"

#include <tvm_runtime/backend/dynamic_library.h>
#include <tvm_runtime/backend/vendor_library.h>

namespace tvm_runtime {
namespace opencl {

namespace {

// Fills `api` from `handle`; returns the comma-separated required symbols it lacks.
std::string ResolveAll(void* handle, ClApi* api) {
  backend::SymbolResolver r(handle);
  r.Required({"clGetPlatformIDs"}, &api->GetPlatformIDs);
  r.Required({"clGetPlatformInfo"}, &api->GetPlatformInfo);
  r.Required({"clGetDeviceIDs"}, &api->GetDeviceIDs);
  r.Required({"clGetDeviceInfo"}, &api->GetDeviceInfo);
  r.Required({"clCreateContext"}, &api->CreateContext);
  r.Required({"clReleaseContext"}, &api->ReleaseContext);
  r.Required({"clCreateCommandQueue"}, &api->CreateCommandQueue);
  r.Required({"clReleaseCommandQueue"}, &api->ReleaseCommandQueue);
  r.Required({"clFinish"}, &api->Finish);
  r.Required({"clCreateBuffer"}, &api->CreateBuffer);
  r.Required({"clReleaseMemObject"}, &api->ReleaseMemObject);
  r.Required({"clEnqueueReadBuffer"}, &api->EnqueueReadBuffer);
  r.Required({"clEnqueueWriteBuffer"}, &api->EnqueueWriteBuffer);
  r.Required({"clEnqueueCopyBuffer"}, &api->EnqueueCopyBuffer);
  r.Required({"clCreateProgramWithSource"}, &api->CreateProgramWithSource);
  r.Required({"clBuildProgram"}, &api->BuildProgram);
  r.Required({"clGetProgramBuildInfo"}, &api->GetProgramBuildInfo);
  r.Required({"clReleaseProgram"}, &api->ReleaseProgram);
  r.Required({"clCreateKernel"}, &api->CreateKernel);
  r.Required({"clReleaseKernel"}, &api->ReleaseKernel);
  r.Required({"clSetKernelArg"}, &api->SetKernelArg);
  r.Required({"clEnqueueNDRangeKernel"}, &api->EnqueueNDRangeKernel);
  r.Required({"clReleaseEvent"}, &api->ReleaseEvent);
  r.Optional({"clEnqueueMarkerWithWaitList"}, &api->EnqueueMarkerWithWaitList);
  r.Optional({"clEnqueueBarrierWithWaitList"}, &api->EnqueueBarrierWithWaitList);
  return r.missing();
}

ClLibrary Load() {
  static ClApi api;  // filled once, by the candidate that is accepted
  backend::VendorLibrary opened = backend::OpenVendorLibrary(
      backend::VendorLibraryCandidates(kLibraryEnvVar, {"libOpenCL.so.1", "libOpenCL.so"}),
      [](void* handle, std::string* why) {
        std::string missing = ResolveAll(handle, &api);
        if (missing.empty()) return true;
        *why = "not an OpenCL 1.2 ICD loader (missing " + missing + ")";
        return false;
      });
  ClLibrary lib;
  if (opened.handle != nullptr) {
    lib.api = &api;
    lib.path = opened.path;
    return lib;
  }
  lib.failure = "no OpenCL ICD loader could be opened (" + opened.tried +
                "). Install one (Debian/Ubuntu: apt-get install ocl-icd-libopencl1; Fedora/RHEL: "
                "dnf install ocl-icd) plus an OpenCL driver, or set " +
                std::string(kLibraryEnvVar) + " to the path of libOpenCL.so.1.";
  return lib;
}

}  // namespace

const ClLibrary& GetClLibrary() {
  // A function-local static: thread-safe one-time initialization, run on first device use.
  static const ClLibrary lib = Load();
  return lib;
}

}  // namespace opencl
}  // namespace tvm_runtime
