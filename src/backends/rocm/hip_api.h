/*
 * The subset of the HIP runtime API (hip_runtime_api.h, ROCm 6.x, AMD platform) this backend
 * uses, declared here so the wheel builds without ROCm and links no ROCm library:
 * libamdhip64.so is dlopen()ed on first device use (hip_library.h).  Values are those of the
 * ROCm 6 headers; hipDeviceAttribute_t was renumbered in ROCm 5.0 and is stable since.
 */
#ifndef TVM_RUNTIME_BACKENDS_ROCM_HIP_API_H_
#define TVM_RUNTIME_BACKENDS_ROCM_HIP_API_H_

#include <cstddef>
#include <cstdint>

namespace tvm_runtime {
namespace rocm {

// hip_runtime_api.h's enums are plain C enums of int size.
using hipError_t = int;
using hipDevice_t = int;
using hipStream_t = struct ihipStream_t*;
using hipEvent_t = struct ihipEvent_t*;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;

// hipError_t
constexpr int hipSuccess = 0;
constexpr int hipErrorInvalidValue = 1;
constexpr int hipErrorOutOfMemory = 2;
constexpr int hipErrorNotInitialized = 3;
constexpr int hipErrorDeinitialized = 4;
constexpr int hipErrorInsufficientDriver = 35;
constexpr int hipErrorInvalidDeviceFunction = 98;
constexpr int hipErrorNoDevice = 100;
constexpr int hipErrorInvalidDevice = 101;
constexpr int hipErrorInvalidImage = 200;
constexpr int hipErrorNoBinaryForGpu = 209;
constexpr int hipErrorInvalidKernelFile = 218;
constexpr int hipErrorSharedObjectInitFailed = 303;
constexpr int hipErrorNotFound = 500;
constexpr int hipErrorLaunchOutOfResources = 701;

// hipDeviceAttribute_t
constexpr int hipDeviceAttributeClockRate = 5;
constexpr int hipDeviceAttributeL2CacheSize = 19;
constexpr int hipDeviceAttributeComputeCapabilityMajor = 23;
constexpr int hipDeviceAttributeMaxBlockDimX = 26;
constexpr int hipDeviceAttributeMaxBlockDimY = 27;
constexpr int hipDeviceAttributeMaxBlockDimZ = 28;
constexpr int hipDeviceAttributeMaxThreadsPerBlock = 56;
constexpr int hipDeviceAttributeMaxThreadsPerMultiProcessor = 57;
constexpr int hipDeviceAttributeComputeCapabilityMinor = 61;
constexpr int hipDeviceAttributeMultiprocessorCount = 63;
constexpr int hipDeviceAttributeMaxRegistersPerBlock = 71;
constexpr int hipDeviceAttributeMaxSharedMemoryPerBlock = 74;
constexpr int hipDeviceAttributeWarpSize = 87;
constexpr int hipDeviceAttributeMaxSharedMemoryPerMultiprocessor = 10002;

// hipMemcpyKind
constexpr int hipMemcpyHostToDevice = 1;
constexpr int hipMemcpyDeviceToHost = 2;
constexpr int hipMemcpyDeviceToDevice = 3;

// Flags
constexpr unsigned int hipStreamNonBlocking = 0x1;
constexpr unsigned int hipEventDefault = 0x0;
constexpr unsigned int hipEventDisableTiming = 0x2;
constexpr unsigned int hipHostMallocDefault = 0x0;

// Markers of the `extra` array of hipModuleLaunchKernel (a packed argument buffer and its size),
// as integers: the pointers are made at the call, so no global needs dynamic initialization.
constexpr uintptr_t kHipLaunchParamBufferPointer = 0x01;
constexpr uintptr_t kHipLaunchParamBufferSize = 0x02;
constexpr uintptr_t kHipLaunchParamEnd = 0x03;

/* hipDeviceProp_tR0600 (ROCm 6.0+) is 1472 bytes; gcnArchName, char[256], is at this offset.
 * hipGetDevicePropertiesR0600 writes into a larger zeroed buffer, so a later, longer struct of
 * the same version cannot overrun it. */
constexpr size_t kDevicePropR0600GcnArchNameOffset = 1160;
constexpr size_t kDevicePropBufferSize = 4096;

/* Entry points, filled by hip_library.cc. */
struct HipApi {
  hipError_t (*Init)(unsigned int flags);
  hipError_t (*DriverGetVersion)(int* version);
  hipError_t (*RuntimeGetVersion)(int* version);
  const char* (*GetErrorName)(hipError_t error);
  const char* (*GetErrorString)(hipError_t error);
  hipError_t (*GetDeviceCount)(int* count);
  hipError_t (*DeviceGetName)(char* name, int len, hipDevice_t device);
  hipError_t (*DeviceGetAttribute)(int* value, int attribute, int device);
  hipError_t (*GetDevicePropertiesR0600)(void* prop, int device);
  hipError_t (*DeviceTotalMem)(size_t* bytes, hipDevice_t device);
  hipError_t (*MemGetInfo)(size_t* free, size_t* total);
  hipError_t (*SetDevice)(int device);
  hipError_t (*GetDevice)(int* device);
  hipError_t (*Malloc)(void** ptr, size_t size);
  hipError_t (*Free)(void* ptr);
  hipError_t (*HostMalloc)(void** ptr, size_t size, unsigned int flags);
  hipError_t (*HostFree)(void* ptr);
  hipError_t (*MemcpyAsync)(void* dst, const void* src, size_t size, int kind, hipStream_t stream);
  hipError_t (*MemcpyPeerAsync)(void* dst, int dst_device, const void* src, int src_device,
                                size_t size, hipStream_t stream);
  hipError_t (*StreamCreateWithFlags)(hipStream_t* stream, unsigned int flags);
  hipError_t (*StreamDestroy)(hipStream_t stream);
  hipError_t (*StreamSynchronize)(hipStream_t stream);
  hipError_t (*StreamWaitEvent)(hipStream_t stream, hipEvent_t event, unsigned int flags);
  hipError_t (*EventCreateWithFlags)(hipEvent_t* event, unsigned int flags);
  hipError_t (*EventDestroy)(hipEvent_t event);
  hipError_t (*EventRecord)(hipEvent_t event, hipStream_t stream);
  hipError_t (*EventSynchronize)(hipEvent_t event);
  hipError_t (*EventElapsedTime)(float* ms, hipEvent_t start, hipEvent_t stop);
  hipError_t (*ModuleLoadData)(hipModule_t* module, const void* image);
  hipError_t (*ModuleUnload)(hipModule_t module);
  hipError_t (*ModuleGetFunction)(hipFunction_t* function, hipModule_t module, const char* name);
  hipError_t (*ModuleLaunchKernel)(hipFunction_t f, unsigned int grid_x, unsigned int grid_y,
                                   unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                   unsigned int block_z, unsigned int shared_mem_bytes,
                                   hipStream_t stream, void** kernel_params, void** extra);
};

}  // namespace rocm
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_ROCM_HIP_API_H_
