/*
 * Compile-time check of src/backends/cuda/{cuda_api.h,nvrtc_api.h} against the real cuda.h
 * (and nvrtc.h when given -DCHECK_NVRTC_H): every constant, launch-struct layout and function
 * signature the backend declares for itself must equal the toolkit's.  Built by
 * test_cuda_api_decls.py wherever CUDA headers exist; the backend itself never needs them.
 */
#include <cuda.h>

#include <cstddef>
#include <type_traits>

#define TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDA_H
#include "cuda_api.h"

namespace ours = tvm_runtime::cuda;

#define SAME_VALUE(name) \
  static_assert(static_cast<long long>(ours::name) == static_cast<long long>(::name), #name)

SAME_VALUE(CUDA_SUCCESS);
SAME_VALUE(CUDA_ERROR_INVALID_VALUE);
SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY);
SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED);
SAME_VALUE(CUDA_ERROR_DEINITIALIZED);
SAME_VALUE(CUDA_ERROR_STUB_LIBRARY);
SAME_VALUE(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER);
SAME_VALUE(CUDA_ERROR_SYSTEM_NOT_READY);
SAME_VALUE(CUDA_ERROR_NO_DEVICE);
SAME_VALUE(CUDA_ERROR_INVALID_DEVICE);
SAME_VALUE(CUDA_ERROR_INVALID_IMAGE);
SAME_VALUE(CUDA_ERROR_NO_BINARY_FOR_GPU);
SAME_VALUE(CUDA_ERROR_INVALID_PTX);
SAME_VALUE(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
SAME_VALUE(CUDA_ERROR_INVALID_HANDLE);
SAME_VALUE(CUDA_ERROR_NOT_FOUND);
SAME_VALUE(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
SAME_VALUE(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
SAME_VALUE(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
SAME_VALUE(CU_JIT_INFO_LOG_BUFFER);
SAME_VALUE(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER);
SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
SAME_VALUE(CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
SAME_VALUE(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
SAME_VALUE(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
SAME_VALUE(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION);
SAME_VALUE(CU_STREAM_NON_BLOCKING);
SAME_VALUE(CU_EVENT_DEFAULT);
SAME_VALUE(CU_EVENT_DISABLE_TIMING);
static_assert(ours::kMemHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE, "portable");

// Our launch structs, used when not checking, must be layout-identical to cuda.h's.
#define SAME_OFFSET(ours_t, ours_f, theirs_t, theirs_f) \
  static_assert(offsetof(ours_t, ours_f) == offsetof(theirs_t, theirs_f), #ours_f)
static_assert(sizeof(ours::CudaLaunchAttribute) == sizeof(::CUlaunchAttribute), "attr size");
SAME_OFFSET(ours::CudaLaunchAttribute, value, ::CUlaunchAttribute, value);
static_assert(sizeof(ours::CudaLaunchConfig) == sizeof(::CUlaunchConfig), "config size");
SAME_OFFSET(ours::CudaLaunchConfig, grid_x, ::CUlaunchConfig, gridDimX);
SAME_OFFSET(ours::CudaLaunchConfig, block_z, ::CUlaunchConfig, blockDimZ);
SAME_OFFSET(ours::CudaLaunchConfig, shared_mem_bytes, ::CUlaunchConfig, sharedMemBytes);
SAME_OFFSET(ours::CudaLaunchConfig, stream, ::CUlaunchConfig, hStream);
SAME_OFFSET(ours::CudaLaunchConfig, attrs, ::CUlaunchConfig, attrs);
SAME_OFFSET(ours::CudaLaunchConfig, num_attrs, ::CUlaunchConfig, numAttrs);
static_assert(offsetof(decltype(ours::CudaLaunchAttribute::value), cluster_dim) ==
                  offsetof(::CUlaunchAttributeValue, clusterDim),
              "clusterDim");
static_assert(sizeof(::CUdeviceptr) == sizeof(unsigned long long), "CUdeviceptr");

// With the real types in place, each entry point's type must be exactly the symbol's.
#define SAME_FN(field, symbol) \
  static_assert(std::is_same<decltype(ours::CuApi::field), decltype(&::symbol)>::value, #symbol)
SAME_FN(Init, cuInit);
SAME_FN(DriverGetVersion, cuDriverGetVersion);
SAME_FN(GetErrorName, cuGetErrorName);
SAME_FN(GetErrorString, cuGetErrorString);
SAME_FN(DeviceGetCount, cuDeviceGetCount);
SAME_FN(DeviceGet, cuDeviceGet);
SAME_FN(DeviceGetName, cuDeviceGetName);
SAME_FN(DeviceGetAttribute, cuDeviceGetAttribute);
SAME_FN(DeviceTotalMem, cuDeviceTotalMem_v2);
SAME_FN(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
SAME_FN(CtxSetCurrent, cuCtxSetCurrent);
SAME_FN(CtxGetCurrent, cuCtxGetCurrent);
SAME_FN(CtxPushCurrent, cuCtxPushCurrent_v2);
SAME_FN(CtxPopCurrent, cuCtxPopCurrent_v2);
SAME_FN(MemAlloc, cuMemAlloc_v2);
SAME_FN(MemFree, cuMemFree_v2);
SAME_FN(MemGetInfo, cuMemGetInfo_v2);
SAME_FN(MemHostAlloc, cuMemHostAlloc);
SAME_FN(MemFreeHost, cuMemFreeHost);
SAME_FN(MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2);
SAME_FN(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2);
SAME_FN(MemcpyDtoDAsync, cuMemcpyDtoDAsync_v2);
SAME_FN(MemcpyPeerAsync, cuMemcpyPeerAsync);
SAME_FN(StreamCreate, cuStreamCreate);
SAME_FN(StreamDestroy, cuStreamDestroy_v2);
SAME_FN(StreamSynchronize, cuStreamSynchronize);
SAME_FN(StreamWaitEvent, cuStreamWaitEvent);
SAME_FN(StreamGetCtx, cuStreamGetCtx);
SAME_FN(EventCreate, cuEventCreate);
SAME_FN(EventDestroy, cuEventDestroy_v2);
SAME_FN(EventRecord, cuEventRecord);
SAME_FN(EventSynchronize, cuEventSynchronize);
SAME_FN(EventElapsedTime, cuEventElapsedTime_v2);
SAME_FN(ModuleLoadDataEx, cuModuleLoadDataEx);
SAME_FN(ModuleUnload, cuModuleUnload);
SAME_FN(ModuleGetFunction, cuModuleGetFunction);
SAME_FN(FuncSetAttribute, cuFuncSetAttribute);
SAME_FN(LaunchKernel, cuLaunchKernel);
SAME_FN(LaunchKernelEx, cuLaunchKernelEx);
// CUDA graphs
SAME_VALUE(CU_STREAM_CAPTURE_MODE_GLOBAL);
SAME_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
SAME_VALUE(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
SAME_FN(StreamBeginCapture, cuStreamBeginCapture_v2);
SAME_FN(StreamEndCapture, cuStreamEndCapture);
SAME_FN(GraphInstantiateWithFlags, cuGraphInstantiateWithFlags);
SAME_FN(GraphLaunch, cuGraphLaunch);
SAME_FN(GraphExecDestroy, cuGraphExecDestroy);
SAME_FN(GraphDestroy, cuGraphDestroy);

// TMA tensor maps (runtime.cuTensorMapEncodeTiled)
SAME_FN(TensorMapEncodeTiled, cuTensorMapEncodeTiled);
static_assert(sizeof(::CUtensorMap) == ours::kTensorMapBytes, "CUtensorMap size");
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT8);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT16);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT32);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_INT32);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT64);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_INT64);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_TFLOAT32);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ);
SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_NONE);
SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_16B);
SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_32B);
SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_NONE);
SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_32B);
SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_64B);
SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_128B);
SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_NONE);
SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
SAME_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
SAME_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
#if CUDA_VERSION >= 12080
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B);
SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B);
SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B);
SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B);
SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B);
#endif

#ifdef CHECK_NVRTC_H
#include <nvrtc.h>
#define TVM_RUNTIME_CUDA_CHECK_AGAINST_NVRTC_H
#include "nvrtc/nvrtc_api.h"

SAME_VALUE(NVRTC_SUCCESS);
SAME_VALUE(NVRTC_ERROR_INVALID_OPTION);
SAME_VALUE(NVRTC_ERROR_COMPILATION);
#define SAME_NVRTC_FN(field, symbol) \
  static_assert(std::is_same<decltype(ours::NvrtcApi::field), decltype(&::symbol)>::value, #symbol)
SAME_NVRTC_FN(Version, nvrtcVersion);
SAME_NVRTC_FN(GetErrorString, nvrtcGetErrorString);
SAME_NVRTC_FN(GetNumSupportedArchs, nvrtcGetNumSupportedArchs);
SAME_NVRTC_FN(GetSupportedArchs, nvrtcGetSupportedArchs);
SAME_NVRTC_FN(CreateProgram, nvrtcCreateProgram);
SAME_NVRTC_FN(DestroyProgram, nvrtcDestroyProgram);
SAME_NVRTC_FN(CompileProgram, nvrtcCompileProgram);
SAME_NVRTC_FN(GetProgramLogSize, nvrtcGetProgramLogSize);
SAME_NVRTC_FN(GetProgramLog, nvrtcGetProgramLog);
SAME_NVRTC_FN(GetPTXSize, nvrtcGetPTXSize);
SAME_NVRTC_FN(GetPTX, nvrtcGetPTX);
SAME_NVRTC_FN(GetCUBINSize, nvrtcGetCUBINSize);
SAME_NVRTC_FN(GetCUBIN, nvrtcGetCUBIN);
#ifdef NVRTC_INSTALL_HEADERS_SKIP_IF_EXISTS  // NVRTC >= 13.3
SAME_NVRTC_FN(InstallBundledHeaders, nvrtcInstallBundledHeaders);
#endif
#endif  // CHECK_NVRTC_H

int main() { return 0; }
