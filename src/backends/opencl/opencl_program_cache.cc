#include "opencl_program_cache.h"

#include <tvm_runtime/c_api.h>

#include <vector>

#include "cl_error.h"

namespace tvm_runtime {
namespace opencl {

namespace {

// Part of every key: bump when what a given source builds to changes here.
constexpr const char* kCacheKind = "opencl-program/1";

}  // namespace

backend::PersistentCache ProgramCache() {
  static backend::CacheStats stats;
  return backend::PersistentCache(
      backend::CachePolicy::FromEnvironment(kCacheEnvPrefix, "tvm-runtime/opencl"), &stats);
}

bool HasBinaryApi(const ClApi& cl) {
  return cl.CreateProgramWithBinary != nullptr && cl.GetProgramInfo != nullptr &&
         cl.WaitForEvents != nullptr;
}

backend::CacheKey ProgramCacheKey(const ClDevice& device, const std::string& source,
                                  const std::string& options) {
  backend::CacheKey key(kCacheKind);
  key.Add("runtime", TVMRuntimeVersion())
      .Add("platform", device.platform_name)
      .Add("platform_version", device.platform_version)
      .Add("device", device.name)
      .Add("device_vendor", device.vendor)
      .Add("device_version", device.version)
      .Add("driver_version", device.driver_version)
      .Add("options", options)
      .AddContent("source", source);
  return key;
}

std::string ProgramBinary(const ClApi& cl, cl_program program) {
  if (!HasBinaryApi(cl)) return "";
  size_t size = 0;
  if (cl.GetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) !=
          CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string binary(size, '\0');
  auto* data = reinterpret_cast<unsigned char*>(&binary[0]);
  if (cl.GetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(data), &data, nullptr) != CL_SUCCESS) {
    return "";
  }
  return binary;
}

cl_program BuildProgramFromBinary(const ClApi& cl, const ClDevice& device,
                                  const std::string& binary, const std::string& options,
                                  std::string* error) {
  const auto* data = reinterpret_cast<const unsigned char*>(binary.data());
  const size_t size = binary.size();
  cl_int status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl_program program =
      cl.CreateProgramWithBinary(device.context, 1, &device.id, &size, &data, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS || program == nullptr) {
    *error =
        "clCreateProgramWithBinary returned " + ClErrorString(err != CL_SUCCESS ? err : status);
    if (program != nullptr) cl.ReleaseProgram(program);
    return nullptr;
  }
  err = cl.BuildProgram(program, 1, &device.id, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    *error = "clBuildProgram of the binary returned " + ClErrorString(err);
    cl.ReleaseProgram(program);
    return nullptr;
  }
  return program;
}

}  // namespace opencl
}  // namespace tvm_runtime
