#include "cl_library.h"

namespace tvm_runtime {
namespace opencl {

namespace {

using backend::SymbolResolver;

void ResolveAll(SymbolResolver& r, ClApi* api) {
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
  r.Optional({"clRetainEvent"}, &api->RetainEvent);
  r.Optional({"clGetEventProfilingInfo"}, &api->GetEventProfilingInfo);
  r.Optional({"clGetCommandQueueInfo"}, &api->GetCommandQueueInfo);
  r.Optional({"clEnqueueMarkerWithWaitList"}, &api->EnqueueMarkerWithWaitList);
  r.Optional({"clEnqueueBarrierWithWaitList"}, &api->EnqueueBarrierWithWaitList);
  r.Optional({"clCreateProgramWithBinary"}, &api->CreateProgramWithBinary);
  r.Optional({"clGetProgramInfo"}, &api->GetProgramInfo);
  r.Optional({"clWaitForEvents"}, &api->WaitForEvents);
}

}  // namespace

const ClLibrary& GetClLibrary() {
  return backend::OpenVendorApiOnce<ClApi>(
      [] {
        return backend::VendorLibraryCandidates(kLibraryEnvVar, {"libOpenCL.so.1", "libOpenCL.so"});
      },
      ResolveAll,
      [] {
        return backend::VendorApiMessages{
            "OpenCL ICD loader", "tvm-runtime-opencl needs an OpenCL 1.2 ICD loader",
            "no OpenCL ICD loader could be opened",
            "Install one (Debian/Ubuntu: apt-get install ocl-icd-libopencl1; Fedora/RHEL: "
            "dnf install ocl-icd) plus an OpenCL driver, or set " +
                std::string(kLibraryEnvVar) + " to the path of libOpenCL.so.1."};
      });
}

}  // namespace opencl
}  // namespace tvm_runtime
