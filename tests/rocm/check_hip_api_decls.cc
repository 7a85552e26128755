/*
 * Compile-time check of src/backends/rocm/hip_api.h against the real hip_runtime_api.h (AMD
 * platform): every error code, device attribute, copy kind and flag the backend declares, the
 * launch markers, and how every entry point is called (ABI: we declare enums as int,
 * abi_check.h).  Built by tests/rocm/test_hip_api_decls.py with Debian's libamdhip64-dev headers
 * (ci/install-system-deps.sh), then run (the launch markers are pointers, compared in main()).
 * hipDeviceProp_tR0600 and hipGetDevicePropertiesR0600 exist from
 * ROCm 6.0 on, so with older headers (Debian 12 ships 5.2) their checks are left out.
 */
#include <cstddef>
#include <cstdint>

#include "abi_check.h"
#include "hip_api.h"

// HIP's flags are macros of the same names: read ours before the vendor header defines them.
namespace flags {
constexpr long long kStreamNonBlocking = tvm_runtime::rocm::hipStreamNonBlocking;
constexpr long long kEventDefault = tvm_runtime::rocm::hipEventDefault;
constexpr long long kEventDisableTiming = tvm_runtime::rocm::hipEventDisableTiming;
constexpr long long kHostMallocDefault = tvm_runtime::rocm::hipHostMallocDefault;
}  // namespace flags

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

namespace ours = tvm_runtime::rocm;

#define SAME_VALUE(name) \
  static_assert(static_cast<long long>(ours::name) == static_cast<long long>(::name), #name)
SAME_VALUE(hipSuccess);
SAME_VALUE(hipErrorInvalidValue);
SAME_VALUE(hipErrorOutOfMemory);
SAME_VALUE(hipErrorNotInitialized);
SAME_VALUE(hipErrorDeinitialized);
SAME_VALUE(hipErrorInsufficientDriver);
SAME_VALUE(hipErrorInvalidDeviceFunction);
SAME_VALUE(hipErrorNoDevice);
SAME_VALUE(hipErrorInvalidDevice);
SAME_VALUE(hipErrorInvalidImage);
SAME_VALUE(hipErrorNoBinaryForGpu);
SAME_VALUE(hipErrorInvalidKernelFile);
SAME_VALUE(hipErrorSharedObjectInitFailed);
SAME_VALUE(hipErrorNotFound);
SAME_VALUE(hipErrorLaunchOutOfResources);
SAME_VALUE(hipDeviceAttributeClockRate);
SAME_VALUE(hipDeviceAttributeL2CacheSize);
SAME_VALUE(hipDeviceAttributeComputeCapabilityMajor);
SAME_VALUE(hipDeviceAttributeMaxBlockDimX);
SAME_VALUE(hipDeviceAttributeMaxBlockDimY);
SAME_VALUE(hipDeviceAttributeMaxBlockDimZ);
SAME_VALUE(hipDeviceAttributeMaxThreadsPerBlock);
SAME_VALUE(hipDeviceAttributeMaxThreadsPerMultiProcessor);
SAME_VALUE(hipDeviceAttributeComputeCapabilityMinor);
SAME_VALUE(hipDeviceAttributeMultiprocessorCount);
SAME_VALUE(hipDeviceAttributeMaxRegistersPerBlock);
SAME_VALUE(hipDeviceAttributeMaxSharedMemoryPerBlock);
SAME_VALUE(hipDeviceAttributeWarpSize);
SAME_VALUE(hipDeviceAttributeMaxSharedMemoryPerMultiprocessor);
SAME_VALUE(hipMemcpyHostToDevice);
SAME_VALUE(hipMemcpyDeviceToHost);
SAME_VALUE(hipMemcpyDeviceToDevice);
static_assert(flags::kStreamNonBlocking == hipStreamNonBlocking, "hipStreamNonBlocking");
static_assert(flags::kEventDefault == hipEventDefault, "hipEventDefault");
static_assert(flags::kEventDisableTiming == hipEventDisableTiming, "hipEventDisableTiming");
static_assert(flags::kHostMallocDefault == hipHostMallocDefault, "hipHostMallocDefault");
static_assert(sizeof(ours::hipError_t) == sizeof(::hipError_t), "hipError_t");
#if HIP_VERSION_MAJOR >= 6
static_assert(offsetof(hipDeviceProp_tR0600, gcnArchName) ==
                  ours::kDevicePropR0600GcnArchNameOffset,
              "hipDeviceProp_tR0600::gcnArchName");
static_assert(sizeof(hipDeviceProp_tR0600) <= ours::kDevicePropBufferSize, "prop buffer");
#endif

#define SAME_FN(field, symbol) TVM_RUNTIME_SAME_ABI(decltype(ours::HipApi::field), symbol)
SAME_FN(Init, hipInit);
SAME_FN(DriverGetVersion, hipDriverGetVersion);
SAME_FN(RuntimeGetVersion, hipRuntimeGetVersion);
SAME_FN(GetErrorName, hipGetErrorName);
SAME_FN(GetErrorString, hipGetErrorString);
SAME_FN(GetDeviceCount, hipGetDeviceCount);
SAME_FN(DeviceGetName, hipDeviceGetName);
SAME_FN(DeviceGetAttribute, hipDeviceGetAttribute);
#if HIP_VERSION_MAJOR >= 6
SAME_FN(GetDevicePropertiesR0600, hipGetDevicePropertiesR0600);
#endif
SAME_FN(DeviceTotalMem, hipDeviceTotalMem);
SAME_FN(MemGetInfo, hipMemGetInfo);
SAME_FN(SetDevice, hipSetDevice);
SAME_FN(GetDevice, hipGetDevice);
// hipMalloc and hipHostMalloc are overloaded with C++ templates: pick the C entry points.
SAME_FN(Malloc, static_cast<::hipError_t (*)(void**, size_t)>(&hipMalloc));
SAME_FN(Free, hipFree);
SAME_FN(HostMalloc, static_cast<::hipError_t (*)(void**, size_t, unsigned int)>(&hipHostMalloc));
SAME_FN(HostFree, hipHostFree);
SAME_FN(MemcpyAsync, hipMemcpyAsync);
SAME_FN(MemcpyPeerAsync, hipMemcpyPeerAsync);
SAME_FN(StreamCreateWithFlags, hipStreamCreateWithFlags);
SAME_FN(StreamDestroy, hipStreamDestroy);
SAME_FN(StreamSynchronize, hipStreamSynchronize);
SAME_FN(StreamWaitEvent, hipStreamWaitEvent);
SAME_FN(EventCreateWithFlags, hipEventCreateWithFlags);
SAME_FN(EventDestroy, hipEventDestroy);
SAME_FN(EventRecord, hipEventRecord);
SAME_FN(EventSynchronize, hipEventSynchronize);
SAME_FN(EventElapsedTime, hipEventElapsedTime);
SAME_FN(ModuleLoadData, hipModuleLoadData);
SAME_FN(ModuleUnload, hipModuleUnload);
SAME_FN(ModuleGetFunction, hipModuleGetFunction);
SAME_FN(ModuleLaunchKernel, hipModuleLaunchKernel);

// The launch markers are pointer macros, compared when this program runs.
int main() {
  bool same = ours::kHipLaunchParamBufferPointer ==
                  reinterpret_cast<uintptr_t>(HIP_LAUNCH_PARAM_BUFFER_POINTER) &&
              ours::kHipLaunchParamBufferSize ==
                  reinterpret_cast<uintptr_t>(HIP_LAUNCH_PARAM_BUFFER_SIZE) &&
              ours::kHipLaunchParamEnd == reinterpret_cast<uintptr_t>(HIP_LAUNCH_PARAM_END);
  return same ? 0 : 1;
}
