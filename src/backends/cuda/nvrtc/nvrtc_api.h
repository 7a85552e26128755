/*
 * The subset of NVRTC (nvrtc.h) used to compile CUDA C++ source artifacts at load time,
 * declared here so the wheel needs no CUDA toolkit: libnvrtc is dlopen()ed on the first
 * source compile (nvrtc_library.h).  With TVM_RUNTIME_CUDA_CHECK_AGAINST_NVRTC_H the types
 * become nvrtc.h's own, and tests/cuda/check_cuda_api_decls.cc compares the signatures.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_NVRTC_API_H_
#define TVM_RUNTIME_BACKENDS_CUDA_NVRTC_API_H_

#include <cstddef>

namespace tvm_runtime {
namespace cuda {

#ifdef TVM_RUNTIME_CUDA_CHECK_AGAINST_NVRTC_H
using nvrtcResult = ::nvrtcResult;
using nvrtcProgram = ::nvrtcProgram;
#else
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
#endif

constexpr int NVRTC_SUCCESS = 0;
constexpr int NVRTC_ERROR_INVALID_OPTION = 5;
constexpr int NVRTC_ERROR_COMPILATION = 6;

struct NvrtcApi {
  nvrtcResult (*Version)(int* major, int* minor);
  const char* (*GetErrorString)(nvrtcResult result);
  nvrtcResult (*GetNumSupportedArchs)(int* num_archs);
  nvrtcResult (*GetSupportedArchs)(int* archs);
  nvrtcResult (*CreateProgram)(nvrtcProgram* prog, const char* src, const char* name,
                               int num_headers, const char* const* headers,
                               const char* const* include_names);
  nvrtcResult (*DestroyProgram)(nvrtcProgram* prog);
  nvrtcResult (*CompileProgram)(nvrtcProgram prog, int num_options, const char* const* options);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*GetProgramLog)(nvrtcProgram prog, char* log);
  nvrtcResult (*GetPTXSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*GetPTX)(nvrtcProgram prog, char* ptx);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram prog, size_t* size);
  nvrtcResult (*GetCUBIN)(nvrtcProgram prog, char* cubin);
  // Optional: NVRTC >= 13.3 carries the CUDA and CCCL headers and can unpack them.
  nvrtcResult (*InstallBundledHeaders)(const char* path, unsigned int flags,
                                       const char** error_log);
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_NVRTC_API_H_
