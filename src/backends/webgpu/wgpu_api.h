/*
 * The part of the WebGPU C API (webgpu.h, plus wgpu-native's wgpu.h extensions) this backend
 * uses, declared from the documented API so that no SDK header is needed at build time: the
 * library is opened with dlopen at first use and every entry point is looked up by name.
 *
 * The layouts follow the webgpu.h revision wgpu-native 29.x implements (WGPUStringView strings,
 * callback-info structs returning WGPUFuture, WGPULimits with maxImmediateSize, bind group layout
 * entries with bindingArraySize).  Older releases laid several of these structs out differently,
 * so wgpu_library.cc refuses a library whose wgpuGetVersion() major is not kWgpuNativeMajor.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WGPU_API_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WGPU_API_H_

#include <cstddef>
#include <cstdint>

namespace tvm_runtime {
namespace webgpu {

constexpr uint32_t kWgpuNativeMajor = 29;

// Opaque object handles.
using WGPUInstance = struct WGPUInstanceImpl*;
using WGPUAdapter = struct WGPUAdapterImpl*;
using WGPUDevice = struct WGPUDeviceImpl*;
using WGPUQueue = struct WGPUQueueImpl*;
using WGPUBuffer = struct WGPUBufferImpl*;
using WGPUShaderModule = struct WGPUShaderModuleImpl*;
using WGPUBindGroupLayout = struct WGPUBindGroupLayoutImpl*;
using WGPUBindGroup = struct WGPUBindGroupImpl*;
using WGPUPipelineLayout = struct WGPUPipelineLayoutImpl*;
using WGPUComputePipeline = struct WGPUComputePipelineImpl*;
using WGPUCommandEncoder = struct WGPUCommandEncoderImpl*;
using WGPUComputePassEncoder = struct WGPUComputePassEncoderImpl*;
using WGPUCommandBuffer = struct WGPUCommandBufferImpl*;
using WGPUQuerySet = struct WGPUQuerySetImpl*;

using WGPUBool = uint32_t;
using WGPUFlags = uint64_t;
using WGPUSubmissionIndex = uint64_t;

constexpr size_t kWgpuStrlen = SIZE_MAX;
constexpr uint64_t kWgpuWholeSize = UINT64_MAX;

// Enumerations (32-bit in the C ABI); only the values used here.
enum WGPUSType : uint32_t { WGPUSType_ShaderSourceWGSL = 2 };
enum WGPUCallbackMode : uint32_t { WGPUCallbackMode_AllowProcessEvents = 2 };
enum WGPURequestAdapterStatus : uint32_t { WGPURequestAdapterStatus_Success = 1 };
enum WGPURequestDeviceStatus : uint32_t { WGPURequestDeviceStatus_Success = 1 };
enum WGPUMapAsyncStatus : uint32_t { WGPUMapAsyncStatus_Success = 1 };
enum WGPUPopErrorScopeStatus : uint32_t { WGPUPopErrorScopeStatus_Success = 1 };
enum WGPUErrorType : uint32_t {
  WGPUErrorType_NoError = 1,
  WGPUErrorType_Validation = 2,
  WGPUErrorType_OutOfMemory = 3,
  WGPUErrorType_Internal = 4,
};
enum WGPUErrorFilter : uint32_t { WGPUErrorFilter_Validation = 1 };
enum WGPUBufferBindingType : uint32_t {
  WGPUBufferBindingType_Uniform = 2,
  WGPUBufferBindingType_Storage = 3,
  WGPUBufferBindingType_ReadOnlyStorage = 4,
};
enum WGPUBackendType : uint32_t {
  WGPUBackendType_Undefined = 0,
  WGPUBackendType_Null = 1,
  WGPUBackendType_WebGPU = 2,
  WGPUBackendType_D3D11 = 3,
  WGPUBackendType_D3D12 = 4,
  WGPUBackendType_Metal = 5,
  WGPUBackendType_Vulkan = 6,
  WGPUBackendType_OpenGL = 7,
  WGPUBackendType_OpenGLES = 8,
};
enum WGPUAdapterType : uint32_t {
  WGPUAdapterType_DiscreteGPU = 1,
  WGPUAdapterType_IntegratedGPU = 2,
  WGPUAdapterType_CPU = 3,
  WGPUAdapterType_Unknown = 4,
};
enum WGPUFeatureName : uint32_t {
  WGPUFeatureName_TimestampQuery = 0x09,
  WGPUFeatureName_ShaderF16 = 0x0B,
  WGPUFeatureName_Subgroups = 0x12,
};
// wgpu.h: native features, requested through the same WGPUFeatureName list.
enum WGPUNativeFeature : uint32_t { WGPUNativeFeature_TimestampQueryInsideEncoders = 0x00030024 };
enum WGPUQueryType : uint32_t { WGPUQueryType_Timestamp = 0x02 };
enum WGPUStatus : uint32_t { WGPUStatus_Success = 1 };

constexpr WGPUFlags WGPUBufferUsage_MapRead = 0x1;
constexpr WGPUFlags WGPUBufferUsage_CopySrc = 0x4;
constexpr WGPUFlags WGPUBufferUsage_CopyDst = 0x8;
constexpr WGPUFlags WGPUBufferUsage_Uniform = 0x40;
constexpr WGPUFlags WGPUBufferUsage_Storage = 0x80;
constexpr WGPUFlags WGPUBufferUsage_QueryResolve = 0x200;
constexpr WGPUFlags WGPUMapMode_Read = 0x1;
constexpr WGPUFlags WGPUShaderStage_Compute = 0x4;
// wgpu.h: WGPUInstanceBackend bits for wgpuInstanceEnumerateAdapters.
constexpr WGPUFlags WGPUInstanceBackend_Vulkan = 1 << 0;
constexpr WGPUFlags WGPUInstanceBackend_GL = 1 << 1;
constexpr WGPUFlags WGPUInstanceBackend_Metal = 1 << 2;
constexpr WGPUFlags WGPUInstanceBackend_DX12 = 1 << 3;

struct WGPUStringView {
  const char* data;
  size_t length;
};

struct WGPUChainedStruct {
  WGPUChainedStruct* next;
  WGPUSType sType;
};

struct WGPUFuture {
  uint64_t id;
};

using WGPURequestAdapterCallback = void (*)(WGPURequestAdapterStatus, WGPUAdapter, WGPUStringView,
                                            void*, void*);
using WGPURequestDeviceCallback = void (*)(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView,
                                           void*, void*);
using WGPUBufferMapCallback = void (*)(WGPUMapAsyncStatus, WGPUStringView, void*, void*);
using WGPUPopErrorScopeCallback = void (*)(WGPUPopErrorScopeStatus, WGPUErrorType, WGPUStringView,
                                           void*, void*);
using WGPUUncapturedErrorCallback = void (*)(const WGPUDevice*, WGPUErrorType, WGPUStringView,
                                             void*, void*);
using WGPUDeviceLostCallback = void (*)(const WGPUDevice*, uint32_t reason, WGPUStringView, void*,
                                        void*);

// The callback-info structs share one shape, except the uncaptured-error one (no mode).
template <typename Callback>
struct WGPUCallbackInfo {
  WGPUChainedStruct* nextInChain;
  WGPUCallbackMode mode;
  Callback callback;
  void* userdata1;
  void* userdata2;
};

struct WGPUUncapturedErrorCallbackInfo {
  WGPUChainedStruct* nextInChain;
  WGPUUncapturedErrorCallback callback;
  void* userdata1;
  void* userdata2;
};

struct WGPUAdapterInfo {
  WGPUChainedStruct* nextInChain;
  WGPUStringView vendor;
  WGPUStringView architecture;
  WGPUStringView device;
  WGPUStringView description;
  WGPUBackendType backendType;
  WGPUAdapterType adapterType;
  uint32_t vendorID;
  uint32_t deviceID;
  uint32_t subgroupMinSize;
  uint32_t subgroupMaxSize;
};

struct WGPULimits {
  WGPUChainedStruct* nextInChain;
  uint32_t maxTextureDimension1D;
  uint32_t maxTextureDimension2D;
  uint32_t maxTextureDimension3D;
  uint32_t maxTextureArrayLayers;
  uint32_t maxBindGroups;
  uint32_t maxBindGroupsPlusVertexBuffers;
  uint32_t maxBindingsPerBindGroup;
  uint32_t maxDynamicUniformBuffersPerPipelineLayout;
  uint32_t maxDynamicStorageBuffersPerPipelineLayout;
  uint32_t maxSampledTexturesPerShaderStage;
  uint32_t maxSamplersPerShaderStage;
  uint32_t maxStorageBuffersPerShaderStage;
  uint32_t maxStorageTexturesPerShaderStage;
  uint32_t maxUniformBuffersPerShaderStage;
  uint64_t maxUniformBufferBindingSize;
  uint64_t maxStorageBufferBindingSize;
  uint32_t minUniformBufferOffsetAlignment;
  uint32_t minStorageBufferOffsetAlignment;
  uint32_t maxVertexBuffers;
  uint64_t maxBufferSize;
  uint32_t maxVertexAttributes;
  uint32_t maxVertexBufferArrayStride;
  uint32_t maxInterStageShaderVariables;
  uint32_t maxColorAttachments;
  uint32_t maxColorAttachmentBytesPerSample;
  uint32_t maxComputeWorkgroupStorageSize;
  uint32_t maxComputeInvocationsPerWorkgroup;
  uint32_t maxComputeWorkgroupSizeX;
  uint32_t maxComputeWorkgroupSizeY;
  uint32_t maxComputeWorkgroupSizeZ;
  uint32_t maxComputeWorkgroupsPerDimension;
  uint32_t maxImmediateSize;
};

struct WGPUQueueDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};

struct WGPUDeviceDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  size_t requiredFeatureCount;
  const WGPUFeatureName* requiredFeatures;
  const WGPULimits* requiredLimits;
  WGPUQueueDescriptor defaultQueue;
  WGPUCallbackInfo<WGPUDeviceLostCallback> deviceLostCallbackInfo;
  WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
};

struct WGPUBufferDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUFlags usage;
  uint64_t size;
  WGPUBool mappedAtCreation;
};

struct WGPUQuerySetDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUQueryType type;
  uint32_t count;
};

struct WGPUShaderModuleDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};

struct WGPUShaderSourceWGSL {
  WGPUChainedStruct chain;
  WGPUStringView code;
};

struct WGPUComputeState {
  WGPUChainedStruct* nextInChain;
  WGPUShaderModule module;
  WGPUStringView entryPoint;
  size_t constantCount;
  const void* constants;
};

struct WGPUComputePipelineDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUPipelineLayout layout;
  WGPUComputeState compute;
};

struct WGPUBufferBindingLayout {
  WGPUChainedStruct* nextInChain;
  WGPUBufferBindingType type;
  WGPUBool hasDynamicOffset;
  uint64_t minBindingSize;
};

// Sampler/texture members of a layout entry stay zero ("binding not used") here.
struct WGPUSamplerBindingLayout {
  WGPUChainedStruct* nextInChain;
  uint32_t type;
};

struct WGPUTextureBindingLayout {
  WGPUChainedStruct* nextInChain;
  uint32_t sampleType;
  uint32_t viewDimension;
  WGPUBool multisampled;
};

struct WGPUStorageTextureBindingLayout {
  WGPUChainedStruct* nextInChain;
  uint32_t access;
  uint32_t format;
  uint32_t viewDimension;
};

struct WGPUBindGroupLayoutEntry {
  WGPUChainedStruct* nextInChain;
  uint32_t binding;
  WGPUFlags visibility;
  uint32_t bindingArraySize;
  WGPUBufferBindingLayout buffer;
  WGPUSamplerBindingLayout sampler;
  WGPUTextureBindingLayout texture;
  WGPUStorageTextureBindingLayout storageTexture;
};

struct WGPUBindGroupLayoutDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  size_t entryCount;
  const WGPUBindGroupLayoutEntry* entries;
};

struct WGPUPipelineLayoutDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  size_t bindGroupLayoutCount;
  const WGPUBindGroupLayout* bindGroupLayouts;
  uint32_t immediateSize;
};

struct WGPUBindGroupEntry {
  WGPUChainedStruct* nextInChain;
  uint32_t binding;
  WGPUBuffer buffer;
  uint64_t offset;
  uint64_t size;
  void* sampler;
  void* textureView;
};

struct WGPUBindGroupDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUBindGroupLayout layout;
  size_t entryCount;
  const WGPUBindGroupEntry* entries;
};

struct WGPULabelOnlyDescriptor {  // WGPUCommandEncoderDescriptor, WGPUCommandBufferDescriptor
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};

struct WGPUComputePassDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  const void* timestampWrites;
};

// wgpu.h
struct WGPUInstanceEnumerateAdapterOptions {
  const WGPUChainedStruct* nextInChain;
  WGPUFlags backends;
};

/* X(name, return type, parameter list): every entry point, resolved by wgpu_library.cc. */
#define TVM_WEBGPU_FUNCTIONS(X)                                                                  \
  X(wgpuGetVersion, uint32_t, (void))                                                            \
  X(wgpuCreateInstance, WGPUInstance, (const void*))                                             \
  X(wgpuInstanceRelease, void, (WGPUInstance))                                                   \
  X(wgpuInstanceProcessEvents, void, (WGPUInstance))                                             \
  X(wgpuInstanceEnumerateAdapters, size_t,                                                       \
    (WGPUInstance, const WGPUInstanceEnumerateAdapterOptions*, WGPUAdapter*))                    \
  X(wgpuAdapterGetInfo, WGPUStatus, (WGPUAdapter, WGPUAdapterInfo*))                             \
  X(wgpuAdapterInfoFreeMembers, void, (WGPUAdapterInfo))                                         \
  X(wgpuAdapterGetLimits, WGPUStatus, (WGPUAdapter, WGPULimits*))                                \
  X(wgpuAdapterHasFeature, WGPUBool, (WGPUAdapter, WGPUFeatureName))                             \
  X(wgpuAdapterRequestDevice, WGPUFuture,                                                        \
    (WGPUAdapter, const WGPUDeviceDescriptor*, WGPUCallbackInfo<WGPURequestDeviceCallback>))     \
  X(wgpuAdapterRelease, void, (WGPUAdapter))                                                     \
  X(wgpuDeviceGetQueue, WGPUQueue, (WGPUDevice))                                                 \
  X(wgpuDeviceGetLimits, WGPUStatus, (WGPUDevice, WGPULimits*))                                  \
  X(wgpuDeviceCreateBuffer, WGPUBuffer, (WGPUDevice, const WGPUBufferDescriptor*))               \
  X(wgpuDeviceCreateShaderModule, WGPUShaderModule,                                              \
    (WGPUDevice, const WGPUShaderModuleDescriptor*))                                             \
  X(wgpuDeviceCreateBindGroupLayout, WGPUBindGroupLayout,                                        \
    (WGPUDevice, const WGPUBindGroupLayoutDescriptor*))                                          \
  X(wgpuDeviceCreatePipelineLayout, WGPUPipelineLayout,                                          \
    (WGPUDevice, const WGPUPipelineLayoutDescriptor*))                                           \
  X(wgpuDeviceCreateComputePipeline, WGPUComputePipeline,                                        \
    (WGPUDevice, const WGPUComputePipelineDescriptor*))                                          \
  X(wgpuDeviceCreateBindGroup, WGPUBindGroup, (WGPUDevice, const WGPUBindGroupDescriptor*))      \
  X(wgpuDeviceCreateCommandEncoder, WGPUCommandEncoder,                                          \
    (WGPUDevice, const WGPULabelOnlyDescriptor*))                                                \
  X(wgpuDevicePushErrorScope, void, (WGPUDevice, WGPUErrorFilter))                               \
  X(wgpuDevicePopErrorScope, WGPUFuture,                                                         \
    (WGPUDevice, WGPUCallbackInfo<WGPUPopErrorScopeCallback>))                                   \
  X(wgpuDevicePoll, WGPUBool, (WGPUDevice, WGPUBool, const WGPUSubmissionIndex*))                \
  X(wgpuDeviceRelease, void, (WGPUDevice))                                                       \
  X(wgpuQueueWriteBuffer, void, (WGPUQueue, WGPUBuffer, uint64_t, const void*, size_t))          \
  X(wgpuQueueSubmitForIndex, WGPUSubmissionIndex, (WGPUQueue, size_t, const WGPUCommandBuffer*)) \
  X(wgpuQueueRelease, void, (WGPUQueue))                                                         \
  X(wgpuBufferMapAsync, WGPUFuture,                                                              \
    (WGPUBuffer, WGPUFlags, size_t, size_t, WGPUCallbackInfo<WGPUBufferMapCallback>))            \
  X(wgpuBufferGetConstMappedRange, const void*, (WGPUBuffer, size_t, size_t))                    \
  X(wgpuBufferGetMappedRange, void*, (WGPUBuffer, size_t, size_t))                               \
  X(wgpuBufferUnmap, void, (WGPUBuffer))                                                         \
  X(wgpuBufferDestroy, void, (WGPUBuffer))                                                       \
  X(wgpuBufferRelease, void, (WGPUBuffer))                                                       \
  X(wgpuShaderModuleRelease, void, (WGPUShaderModule))                                           \
  X(wgpuBindGroupLayoutRelease, void, (WGPUBindGroupLayout))                                     \
  X(wgpuPipelineLayoutRelease, void, (WGPUPipelineLayout))                                       \
  X(wgpuComputePipelineRelease, void, (WGPUComputePipeline))                                     \
  X(wgpuBindGroupRelease, void, (WGPUBindGroup))                                                 \
  X(wgpuCommandEncoderBeginComputePass, WGPUComputePassEncoder,                                  \
    (WGPUCommandEncoder, const WGPUComputePassDescriptor*))                                      \
  X(wgpuCommandEncoderCopyBufferToBuffer, void,                                                  \
    (WGPUCommandEncoder, WGPUBuffer, uint64_t, WGPUBuffer, uint64_t, uint64_t))                  \
  X(wgpuCommandEncoderFinish, WGPUCommandBuffer,                                                 \
    (WGPUCommandEncoder, const WGPULabelOnlyDescriptor*))                                        \
  X(wgpuCommandEncoderRelease, void, (WGPUCommandEncoder))                                       \
  X(wgpuCommandBufferRelease, void, (WGPUCommandBuffer))                                         \
  X(wgpuComputePassEncoderSetPipeline, void, (WGPUComputePassEncoder, WGPUComputePipeline))      \
  X(wgpuComputePassEncoderSetBindGroup, void,                                                    \
    (WGPUComputePassEncoder, uint32_t, WGPUBindGroup, size_t, const uint32_t*))                  \
  X(wgpuComputePassEncoderDispatchWorkgroups, void,                                              \
    (WGPUComputePassEncoder, uint32_t, uint32_t, uint32_t))                                      \
  X(wgpuComputePassEncoderEnd, void, (WGPUComputePassEncoder))                                   \
  X(wgpuComputePassEncoderRelease, void, (WGPUComputePassEncoder))                               \
  X(wgpuDeviceCreateQuerySet, WGPUQuerySet, (WGPUDevice, const WGPUQuerySetDescriptor*))         \
  X(wgpuQuerySetRelease, void, (WGPUQuerySet))                                                   \
  X(wgpuCommandEncoderWriteTimestamp, void, (WGPUCommandEncoder, WGPUQuerySet, uint32_t))        \
  X(wgpuCommandEncoderResolveQuerySet, void,                                                     \
    (WGPUCommandEncoder, WGPUQuerySet, uint32_t, uint32_t, WGPUBuffer, uint64_t))                \
  X(wgpuQueueGetTimestampPeriod, float, (WGPUQueue))

struct WgpuFunctions {
#define TVM_WEBGPU_DECLARE_POINTER(name, ret, params) ret(*name) params = nullptr;
  TVM_WEBGPU_FUNCTIONS(TVM_WEBGPU_DECLARE_POINTER)
#undef TVM_WEBGPU_DECLARE_POINTER
};

inline WGPUStringView StringView(const char* s, size_t n) { return WGPUStringView{s, n}; }
inline WGPUStringView NullStringView() { return WGPUStringView{nullptr, kWgpuStrlen}; }

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WGPU_API_H_
