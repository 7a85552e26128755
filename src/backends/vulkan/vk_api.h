/*
 * The subset of the Vulkan 1.0-1.3 C API this backend uses, declared by hand.
 *
 * Why not the Khronos headers: the backend never links libvulkan (it is dlopen'ed on first use)
 * and needs ~60 entry points and ~50 structs of the 20k-line vulkan_core.h, so declaring them
 * here keeps the build free of any SDK.  Layouts follow the Vulkan specification (Vulkan-Headers
 * 1.3.239); tests/vulkan/test_vulkan_api_layout.py compiles this header next to the real
 * vulkan_core.h (when installed) and static_asserts every struct size, field offset, enumerator
 * value and entry-point arity against it.
 *
 * Names are the specification's, inside our namespace.  Identifiers that vulkan_core.h defines
 * as preprocessor macros (VK_TRUE, VK_WHOLE_SIZE, VK_MAX_*_SIZE, VK_API_VERSION_*, ...) are
 * spelled differently here (kVk...) so the layout check can include both headers.
 *
 * Only 64-bit platforms are supported: non-dispatchable handles are then pointers.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VK_API_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VK_API_H_

#include <cstddef>
#include <cstdint>

static_assert(sizeof(void*) == 8, "the Vulkan backend supports 64-bit platforms only");

namespace tvm_runtime {
namespace vulkan {

// ------------------------------------------------------------------ scalars and handles

using VkBool32 = uint32_t;
using VkFlags = uint32_t;
using VkDeviceSize = uint64_t;

constexpr VkBool32 kVkTrue = 1;
constexpr VkBool32 kVkFalse = 0;
constexpr VkDeviceSize kVkWholeSize = ~0ULL;
constexpr uint32_t kVkMaxExtensionNameSize = 256;
constexpr uint32_t kVkMaxDescriptionSize = 256;
constexpr uint32_t kVkMaxPhysicalDeviceNameSize = 256;
constexpr uint32_t kVkMaxDriverNameSize = 256;
constexpr uint32_t kVkMaxDriverInfoSize = 256;
constexpr uint32_t kVkUuidSize = 16;
constexpr uint32_t kVkMaxMemoryTypes = 32;
constexpr uint32_t kVkMaxMemoryHeaps = 16;
// The Vulkan-Headers release the declarations were checked against (Device.api_version).
constexpr uint32_t kVkHeaderVersion = 239;

constexpr uint32_t VkMakeApiVersion(uint32_t major, uint32_t minor, uint32_t patch) {
  return (major << 22) | (minor << 12) | patch;
}
constexpr uint32_t VkApiVersionMajor(uint32_t v) { return (v >> 22) & 0x7FU; }
constexpr uint32_t VkApiVersionMinor(uint32_t v) { return (v >> 12) & 0x3FFU; }
constexpr uint32_t VkApiVersionPatch(uint32_t v) { return v & 0xFFFU; }
constexpr uint32_t kVkApiVersion10 = VkMakeApiVersion(1, 0, 0);
constexpr uint32_t kVkApiVersion11 = VkMakeApiVersion(1, 1, 0);
constexpr uint32_t kVkApiVersion12 = VkMakeApiVersion(1, 2, 0);
constexpr uint32_t kVkApiVersion13 = VkMakeApiVersion(1, 3, 0);

#define TVM_VK_HANDLE(name) using name = struct name##_T*
TVM_VK_HANDLE(VkInstance);
TVM_VK_HANDLE(VkPhysicalDevice);
TVM_VK_HANDLE(VkDevice);
TVM_VK_HANDLE(VkQueue);
TVM_VK_HANDLE(VkCommandBuffer);
TVM_VK_HANDLE(VkBuffer);
TVM_VK_HANDLE(VkDeviceMemory);
TVM_VK_HANDLE(VkCommandPool);
TVM_VK_HANDLE(VkFence);
TVM_VK_HANDLE(VkSemaphore);
TVM_VK_HANDLE(VkShaderModule);
TVM_VK_HANDLE(VkDescriptorSetLayout);
TVM_VK_HANDLE(VkPipelineLayout);
TVM_VK_HANDLE(VkPipeline);
TVM_VK_HANDLE(VkPipelineCache);
TVM_VK_HANDLE(VkDescriptorPool);
TVM_VK_HANDLE(VkDescriptorSet);
TVM_VK_HANDLE(VkSampler);
TVM_VK_HANDLE(VkBufferView);
TVM_VK_HANDLE(VkDebugUtilsMessengerEXT);
TVM_VK_HANDLE(VkQueryPool);
#undef TVM_VK_HANDLE

// Structs we only ever pass as NULL pointers.
struct VkAllocationCallbacks;
struct VkCommandBufferInheritanceInfo;
struct VkSpecializationInfo;
struct VkDescriptorImageInfo;
struct VkDebugUtilsLabelEXT;
struct VkDebugUtilsObjectNameInfoEXT;

// ------------------------------------------------------------------ enums

enum VkResult : int32_t {
  VK_SUCCESS = 0,
  VK_NOT_READY = 1,
  VK_TIMEOUT = 2,
  VK_EVENT_SET = 3,
  VK_EVENT_RESET = 4,
  VK_INCOMPLETE = 5,
  VK_ERROR_OUT_OF_HOST_MEMORY = -1,
  VK_ERROR_OUT_OF_DEVICE_MEMORY = -2,
  VK_ERROR_INITIALIZATION_FAILED = -3,
  VK_ERROR_DEVICE_LOST = -4,
  VK_ERROR_MEMORY_MAP_FAILED = -5,
  VK_ERROR_LAYER_NOT_PRESENT = -6,
  VK_ERROR_EXTENSION_NOT_PRESENT = -7,
  VK_ERROR_FEATURE_NOT_PRESENT = -8,
  VK_ERROR_INCOMPATIBLE_DRIVER = -9,
  VK_ERROR_TOO_MANY_OBJECTS = -10,
  VK_ERROR_FORMAT_NOT_SUPPORTED = -11,
  VK_ERROR_FRAGMENTED_POOL = -12,
  VK_ERROR_UNKNOWN = -13,
  VK_ERROR_OUT_OF_POOL_MEMORY = -1000069000,
  VK_ERROR_INVALID_EXTERNAL_HANDLE = -1000072003,
  VK_ERROR_FRAGMENTATION = -1000161000,
  VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS = -1000257000,
  VK_PIPELINE_COMPILE_REQUIRED = 1000297000,
  VK_ERROR_INVALID_SHADER_NV = -1000012000,
};

enum VkStructureType : int32_t {
  VK_STRUCTURE_TYPE_APPLICATION_INFO = 0,
  VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO = 1,
  VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO = 2,
  VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO = 3,
  VK_STRUCTURE_TYPE_SUBMIT_INFO = 4,
  VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO = 5,
  VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE = 6,
  VK_STRUCTURE_TYPE_FENCE_CREATE_INFO = 8,
  VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO = 11,
  VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO = 12,
  VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO = 16,
  VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO = 17,
  VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO = 18,
  VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO = 29,
  VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO = 30,
  VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO = 32,
  VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO = 33,
  VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO = 34,
  VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET = 35,
  VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO = 39,
  VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO = 40,
  VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO = 42,
  VK_STRUCTURE_TYPE_MEMORY_BARRIER = 46,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES = 1000094000,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES = 1000083000,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 = 1000059000,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 = 1000059001,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2 = 1000059006,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES = 1000177000,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES = 1000196000,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES = 1000082000,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES = 1000280000,
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT = 1000237000,
  VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT = 1000128003,
  VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT = 1000128004,
};

enum VkPhysicalDeviceType : int32_t {
  VK_PHYSICAL_DEVICE_TYPE_OTHER = 0,
  VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU = 1,
  VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU = 2,
  VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU = 3,
  VK_PHYSICAL_DEVICE_TYPE_CPU = 4,
};

enum VkDriverId : int32_t {
  VK_DRIVER_ID_MESA_LLVMPIPE = 13,
};

enum VkSharingMode : int32_t { VK_SHARING_MODE_EXCLUSIVE = 0 };
enum VkQueryType : int32_t { VK_QUERY_TYPE_TIMESTAMP = 2 };
enum VkQueryResultFlagBits : uint32_t {
  VK_QUERY_RESULT_64_BIT = 0x1,
  VK_QUERY_RESULT_WAIT_BIT = 0x2
};
enum VkCommandBufferLevel : int32_t { VK_COMMAND_BUFFER_LEVEL_PRIMARY = 0 };
enum VkPipelineBindPoint : int32_t { VK_PIPELINE_BIND_POINT_COMPUTE = 1 };

enum VkDescriptorType : int32_t {
  VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER = 6,
  VK_DESCRIPTOR_TYPE_STORAGE_BUFFER = 7,
};

enum VkQueueFlagBits : uint32_t {
  VK_QUEUE_GRAPHICS_BIT = 0x1,
  VK_QUEUE_COMPUTE_BIT = 0x2,
  VK_QUEUE_TRANSFER_BIT = 0x4,
};

enum VkMemoryPropertyFlagBits : uint32_t {
  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT = 0x1,
  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT = 0x2,
  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT = 0x4,
  VK_MEMORY_PROPERTY_HOST_CACHED_BIT = 0x8,
  VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT = 0x10,
  VK_MEMORY_PROPERTY_PROTECTED_BIT = 0x20,
};

enum VkMemoryHeapFlagBits : uint32_t { VK_MEMORY_HEAP_DEVICE_LOCAL_BIT = 0x1 };

enum VkBufferUsageFlagBits : uint32_t {
  VK_BUFFER_USAGE_TRANSFER_SRC_BIT = 0x1,
  VK_BUFFER_USAGE_TRANSFER_DST_BIT = 0x2,
  VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT = 0x10,
  VK_BUFFER_USAGE_STORAGE_BUFFER_BIT = 0x20,
};

enum VkCommandPoolCreateFlagBits : uint32_t { VK_COMMAND_POOL_CREATE_TRANSIENT_BIT = 0x1 };
enum VkCommandBufferUsageFlagBits : uint32_t { VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT = 0x1 };
enum VkFenceCreateFlagBits : uint32_t { VK_FENCE_CREATE_SIGNALED_BIT = 0x1 };
enum VkShaderStageFlagBits : uint32_t { VK_SHADER_STAGE_COMPUTE_BIT = 0x20 };
enum VkDescriptorSetLayoutCreateFlagBits : uint32_t {
  VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR = 0x1
};

enum VkPipelineStageFlagBits : uint32_t {
  VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT = 0x1,
  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT = 0x800,
  VK_PIPELINE_STAGE_TRANSFER_BIT = 0x1000,
  VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT = 0x2000,
  VK_PIPELINE_STAGE_HOST_BIT = 0x4000,
  VK_PIPELINE_STAGE_ALL_COMMANDS_BIT = 0x10000,
};

enum VkAccessFlagBits : uint32_t {
  VK_ACCESS_UNIFORM_READ_BIT = 0x8,
  VK_ACCESS_SHADER_READ_BIT = 0x20,
  VK_ACCESS_SHADER_WRITE_BIT = 0x40,
  VK_ACCESS_TRANSFER_READ_BIT = 0x800,
  VK_ACCESS_TRANSFER_WRITE_BIT = 0x1000,
  VK_ACCESS_HOST_READ_BIT = 0x2000,
  VK_ACCESS_HOST_WRITE_BIT = 0x4000,
};

enum VkDebugUtilsMessageSeverityFlagBitsEXT : uint32_t {
  VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT = 0x1,
  VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT = 0x10,
  VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT = 0x100,
  VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT = 0x1000,
};

enum VkDebugUtilsMessageTypeFlagBitsEXT : uint32_t {
  VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT = 0x1,
  VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT = 0x2,
  VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT = 0x4,
};

// ------------------------------------------------------------------ instance and physical device

struct VkApplicationInfo {
  VkStructureType sType;
  const void* pNext;
  const char* pApplicationName;
  uint32_t applicationVersion;
  const char* pEngineName;
  uint32_t engineVersion;
  uint32_t apiVersion;
};

struct VkInstanceCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  const VkApplicationInfo* pApplicationInfo;
  uint32_t enabledLayerCount;
  const char* const* ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char* const* ppEnabledExtensionNames;
};

struct VkExtensionProperties {
  char extensionName[kVkMaxExtensionNameSize];
  uint32_t specVersion;
};

struct VkLayerProperties {
  char layerName[kVkMaxExtensionNameSize];
  uint32_t specVersion;
  uint32_t implementationVersion;
  char description[kVkMaxDescriptionSize];
};

struct VkPhysicalDeviceLimits {
  uint32_t maxImageDimension1D;
  uint32_t maxImageDimension2D;
  uint32_t maxImageDimension3D;
  uint32_t maxImageDimensionCube;
  uint32_t maxImageArrayLayers;
  uint32_t maxTexelBufferElements;
  uint32_t maxUniformBufferRange;
  uint32_t maxStorageBufferRange;
  uint32_t maxPushConstantsSize;
  uint32_t maxMemoryAllocationCount;
  uint32_t maxSamplerAllocationCount;
  VkDeviceSize bufferImageGranularity;
  VkDeviceSize sparseAddressSpaceSize;
  uint32_t maxBoundDescriptorSets;
  uint32_t maxPerStageDescriptorSamplers;
  uint32_t maxPerStageDescriptorUniformBuffers;
  uint32_t maxPerStageDescriptorStorageBuffers;
  uint32_t maxPerStageDescriptorSampledImages;
  uint32_t maxPerStageDescriptorStorageImages;
  uint32_t maxPerStageDescriptorInputAttachments;
  uint32_t maxPerStageResources;
  uint32_t maxDescriptorSetSamplers;
  uint32_t maxDescriptorSetUniformBuffers;
  uint32_t maxDescriptorSetUniformBuffersDynamic;
  uint32_t maxDescriptorSetStorageBuffers;
  uint32_t maxDescriptorSetStorageBuffersDynamic;
  uint32_t maxDescriptorSetSampledImages;
  uint32_t maxDescriptorSetStorageImages;
  uint32_t maxDescriptorSetInputAttachments;
  uint32_t maxVertexInputAttributes;
  uint32_t maxVertexInputBindings;
  uint32_t maxVertexInputAttributeOffset;
  uint32_t maxVertexInputBindingStride;
  uint32_t maxVertexOutputComponents;
  uint32_t maxTessellationGenerationLevel;
  uint32_t maxTessellationPatchSize;
  uint32_t maxTessellationControlPerVertexInputComponents;
  uint32_t maxTessellationControlPerVertexOutputComponents;
  uint32_t maxTessellationControlPerPatchOutputComponents;
  uint32_t maxTessellationControlTotalOutputComponents;
  uint32_t maxTessellationEvaluationInputComponents;
  uint32_t maxTessellationEvaluationOutputComponents;
  uint32_t maxGeometryShaderInvocations;
  uint32_t maxGeometryInputComponents;
  uint32_t maxGeometryOutputComponents;
  uint32_t maxGeometryOutputVertices;
  uint32_t maxGeometryTotalOutputComponents;
  uint32_t maxFragmentInputComponents;
  uint32_t maxFragmentOutputAttachments;
  uint32_t maxFragmentDualSrcAttachments;
  uint32_t maxFragmentCombinedOutputResources;
  uint32_t maxComputeSharedMemorySize;
  uint32_t maxComputeWorkGroupCount[3];
  uint32_t maxComputeWorkGroupInvocations;
  uint32_t maxComputeWorkGroupSize[3];
  uint32_t subPixelPrecisionBits;
  uint32_t subTexelPrecisionBits;
  uint32_t mipmapPrecisionBits;
  uint32_t maxDrawIndexedIndexValue;
  uint32_t maxDrawIndirectCount;
  float maxSamplerLodBias;
  float maxSamplerAnisotropy;
  uint32_t maxViewports;
  uint32_t maxViewportDimensions[2];
  float viewportBoundsRange[2];
  uint32_t viewportSubPixelBits;
  size_t minMemoryMapAlignment;
  VkDeviceSize minTexelBufferOffsetAlignment;
  VkDeviceSize minUniformBufferOffsetAlignment;
  VkDeviceSize minStorageBufferOffsetAlignment;
  int32_t minTexelOffset;
  uint32_t maxTexelOffset;
  int32_t minTexelGatherOffset;
  uint32_t maxTexelGatherOffset;
  float minInterpolationOffset;
  float maxInterpolationOffset;
  uint32_t subPixelInterpolationOffsetBits;
  uint32_t maxFramebufferWidth;
  uint32_t maxFramebufferHeight;
  uint32_t maxFramebufferLayers;
  VkFlags framebufferColorSampleCounts;
  VkFlags framebufferDepthSampleCounts;
  VkFlags framebufferStencilSampleCounts;
  VkFlags framebufferNoAttachmentsSampleCounts;
  uint32_t maxColorAttachments;
  VkFlags sampledImageColorSampleCounts;
  VkFlags sampledImageIntegerSampleCounts;
  VkFlags sampledImageDepthSampleCounts;
  VkFlags sampledImageStencilSampleCounts;
  VkFlags storageImageSampleCounts;
  uint32_t maxSampleMaskWords;
  VkBool32 timestampComputeAndGraphics;
  float timestampPeriod;
  uint32_t maxClipDistances;
  uint32_t maxCullDistances;
  uint32_t maxCombinedClipAndCullDistances;
  uint32_t discreteQueuePriorities;
  float pointSizeRange[2];
  float lineWidthRange[2];
  float pointSizeGranularity;
  float lineWidthGranularity;
  VkBool32 strictLines;
  VkBool32 standardSampleLocations;
  VkDeviceSize optimalBufferCopyOffsetAlignment;
  VkDeviceSize optimalBufferCopyRowPitchAlignment;
  VkDeviceSize nonCoherentAtomSize;
};

struct VkPhysicalDeviceSparseProperties {
  VkBool32 residencyStandard2DBlockShape;
  VkBool32 residencyStandard2DMultisampleBlockShape;
  VkBool32 residencyStandard3DBlockShape;
  VkBool32 residencyAlignedMipSize;
  VkBool32 residencyNonResidentStrict;
};

struct VkPhysicalDeviceProperties {
  uint32_t apiVersion;
  uint32_t driverVersion;
  uint32_t vendorID;
  uint32_t deviceID;
  VkPhysicalDeviceType deviceType;
  char deviceName[kVkMaxPhysicalDeviceNameSize];
  uint8_t pipelineCacheUUID[kVkUuidSize];
  VkPhysicalDeviceLimits limits;
  VkPhysicalDeviceSparseProperties sparseProperties;
};

struct VkPhysicalDeviceProperties2 {
  VkStructureType sType;
  void* pNext;
  VkPhysicalDeviceProperties properties;
};

struct VkPhysicalDeviceSubgroupProperties {
  VkStructureType sType;
  void* pNext;
  uint32_t subgroupSize;
  VkFlags supportedStages;
  VkFlags supportedOperations;
  VkBool32 quadOperationsInAllStages;
};

struct VkConformanceVersion {
  uint8_t major;
  uint8_t minor;
  uint8_t subminor;
  uint8_t patch;
};

struct VkPhysicalDeviceDriverProperties {
  VkStructureType sType;
  void* pNext;
  VkDriverId driverID;
  char driverName[kVkMaxDriverNameSize];
  char driverInfo[kVkMaxDriverInfoSize];
  VkConformanceVersion conformanceVersion;
};

struct VkPhysicalDeviceFeatures {
  VkBool32 robustBufferAccess;
  VkBool32 fullDrawIndexUint32;
  VkBool32 imageCubeArray;
  VkBool32 independentBlend;
  VkBool32 geometryShader;
  VkBool32 tessellationShader;
  VkBool32 sampleRateShading;
  VkBool32 dualSrcBlend;
  VkBool32 logicOp;
  VkBool32 multiDrawIndirect;
  VkBool32 drawIndirectFirstInstance;
  VkBool32 depthClamp;
  VkBool32 depthBiasClamp;
  VkBool32 fillModeNonSolid;
  VkBool32 depthBounds;
  VkBool32 wideLines;
  VkBool32 largePoints;
  VkBool32 alphaToOne;
  VkBool32 multiViewport;
  VkBool32 samplerAnisotropy;
  VkBool32 textureCompressionETC2;
  VkBool32 textureCompressionASTC_LDR;
  VkBool32 textureCompressionBC;
  VkBool32 occlusionQueryPrecise;
  VkBool32 pipelineStatisticsQuery;
  VkBool32 vertexPipelineStoresAndAtomics;
  VkBool32 fragmentStoresAndAtomics;
  VkBool32 shaderTessellationAndGeometryPointSize;
  VkBool32 shaderImageGatherExtended;
  VkBool32 shaderStorageImageExtendedFormats;
  VkBool32 shaderStorageImageMultisample;
  VkBool32 shaderStorageImageReadWithoutFormat;
  VkBool32 shaderStorageImageWriteWithoutFormat;
  VkBool32 shaderUniformBufferArrayDynamicIndexing;
  VkBool32 shaderSampledImageArrayDynamicIndexing;
  VkBool32 shaderStorageBufferArrayDynamicIndexing;
  VkBool32 shaderStorageImageArrayDynamicIndexing;
  VkBool32 shaderClipDistance;
  VkBool32 shaderCullDistance;
  VkBool32 shaderFloat64;
  VkBool32 shaderInt64;
  VkBool32 shaderInt16;
  VkBool32 shaderResourceResidency;
  VkBool32 shaderResourceMinLod;
  VkBool32 sparseBinding;
  VkBool32 sparseResidencyBuffer;
  VkBool32 sparseResidencyImage2D;
  VkBool32 sparseResidencyImage3D;
  VkBool32 sparseResidency2Samples;
  VkBool32 sparseResidency4Samples;
  VkBool32 sparseResidency8Samples;
  VkBool32 sparseResidency16Samples;
  VkBool32 sparseResidencyAliased;
  VkBool32 variableMultisampleRate;
  VkBool32 inheritedQueries;
};

struct VkPhysicalDeviceFeatures2 {
  VkStructureType sType;
  void* pNext;
  VkPhysicalDeviceFeatures features;
};

struct VkPhysicalDevice8BitStorageFeatures {
  VkStructureType sType;
  void* pNext;
  VkBool32 storageBuffer8BitAccess;
  VkBool32 uniformAndStorageBuffer8BitAccess;
  VkBool32 storagePushConstant8;
};

struct VkPhysicalDevice16BitStorageFeatures {
  VkStructureType sType;
  void* pNext;
  VkBool32 storageBuffer16BitAccess;
  VkBool32 uniformAndStorageBuffer16BitAccess;
  VkBool32 storagePushConstant16;
  VkBool32 storageInputOutput16;
};

struct VkPhysicalDeviceShaderFloat16Int8Features {
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderFloat16;
  VkBool32 shaderInt8;
};

struct VkPhysicalDeviceShaderIntegerDotProductFeatures {
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderIntegerDotProduct;
};

struct VkExtent3D {
  uint32_t width;
  uint32_t height;
  uint32_t depth;
};

struct VkQueueFamilyProperties {
  VkFlags queueFlags;
  uint32_t queueCount;
  uint32_t timestampValidBits;
  VkExtent3D minImageTransferGranularity;
};

struct VkMemoryType {
  VkFlags propertyFlags;
  uint32_t heapIndex;
};

struct VkMemoryHeap {
  VkDeviceSize size;
  VkFlags flags;
};

struct VkPhysicalDeviceMemoryProperties {
  uint32_t memoryTypeCount;
  VkMemoryType memoryTypes[kVkMaxMemoryTypes];
  uint32_t memoryHeapCount;
  VkMemoryHeap memoryHeaps[kVkMaxMemoryHeaps];
};

struct VkPhysicalDeviceMemoryProperties2 {
  VkStructureType sType;
  void* pNext;
  VkPhysicalDeviceMemoryProperties memoryProperties;
};

struct VkPhysicalDeviceMemoryBudgetPropertiesEXT {
  VkStructureType sType;
  void* pNext;
  VkDeviceSize heapBudget[kVkMaxMemoryHeaps];
  VkDeviceSize heapUsage[kVkMaxMemoryHeaps];
};

// ------------------------------------------------------------------ logical device and resources

struct VkDeviceQueueCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  uint32_t queueFamilyIndex;
  uint32_t queueCount;
  const float* pQueuePriorities;
};

struct VkDeviceCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  uint32_t queueCreateInfoCount;
  const VkDeviceQueueCreateInfo* pQueueCreateInfos;
  uint32_t enabledLayerCount;
  const char* const* ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char* const* ppEnabledExtensionNames;
  const VkPhysicalDeviceFeatures* pEnabledFeatures;
};

struct VkBufferCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  VkDeviceSize size;
  VkFlags usage;
  VkSharingMode sharingMode;
  uint32_t queueFamilyIndexCount;
  const uint32_t* pQueueFamilyIndices;
};

struct VkMemoryRequirements {
  VkDeviceSize size;
  VkDeviceSize alignment;
  uint32_t memoryTypeBits;
};

struct VkMemoryAllocateInfo {
  VkStructureType sType;
  const void* pNext;
  VkDeviceSize allocationSize;
  uint32_t memoryTypeIndex;
};

struct VkMappedMemoryRange {
  VkStructureType sType;
  const void* pNext;
  VkDeviceMemory memory;
  VkDeviceSize offset;
  VkDeviceSize size;
};

struct VkCommandPoolCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  uint32_t queueFamilyIndex;
};

struct VkCommandBufferAllocateInfo {
  VkStructureType sType;
  const void* pNext;
  VkCommandPool commandPool;
  VkCommandBufferLevel level;
  uint32_t commandBufferCount;
};

struct VkCommandBufferBeginInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  const VkCommandBufferInheritanceInfo* pInheritanceInfo;
};

struct VkSubmitInfo {
  VkStructureType sType;
  const void* pNext;
  uint32_t waitSemaphoreCount;
  const VkSemaphore* pWaitSemaphores;
  const VkFlags* pWaitDstStageMask;
  uint32_t commandBufferCount;
  const VkCommandBuffer* pCommandBuffers;
  uint32_t signalSemaphoreCount;
  const VkSemaphore* pSignalSemaphores;
};

struct VkFenceCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
};

struct VkQueryPoolCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  VkQueryType queryType;
  uint32_t queryCount;
  VkFlags pipelineStatistics;
};

struct VkShaderModuleCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  size_t codeSize;
  const uint32_t* pCode;
};

struct VkPipelineCacheCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  size_t initialDataSize;
  const void* pInitialData;
};

struct VkDescriptorSetLayoutBinding {
  uint32_t binding;
  VkDescriptorType descriptorType;
  uint32_t descriptorCount;
  VkFlags stageFlags;
  const VkSampler* pImmutableSamplers;
};

struct VkDescriptorSetLayoutCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  uint32_t bindingCount;
  const VkDescriptorSetLayoutBinding* pBindings;
};

struct VkPushConstantRange {
  VkFlags stageFlags;
  uint32_t offset;
  uint32_t size;
};

struct VkPipelineLayoutCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  uint32_t setLayoutCount;
  const VkDescriptorSetLayout* pSetLayouts;
  uint32_t pushConstantRangeCount;
  const VkPushConstantRange* pPushConstantRanges;
};

struct VkPipelineShaderStageCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  VkShaderStageFlagBits stage;
  VkShaderModule module;
  const char* pName;
  const VkSpecializationInfo* pSpecializationInfo;
};

struct VkComputePipelineCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  VkPipelineShaderStageCreateInfo stage;
  VkPipelineLayout layout;
  VkPipeline basePipelineHandle;
  int32_t basePipelineIndex;
};

struct VkDescriptorPoolSize {
  VkDescriptorType type;
  uint32_t descriptorCount;
};

struct VkDescriptorPoolCreateInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  uint32_t maxSets;
  uint32_t poolSizeCount;
  const VkDescriptorPoolSize* pPoolSizes;
};

struct VkDescriptorSetAllocateInfo {
  VkStructureType sType;
  const void* pNext;
  VkDescriptorPool descriptorPool;
  uint32_t descriptorSetCount;
  const VkDescriptorSetLayout* pSetLayouts;
};

struct VkDescriptorBufferInfo {
  VkBuffer buffer;
  VkDeviceSize offset;
  VkDeviceSize range;
};

struct VkWriteDescriptorSet {
  VkStructureType sType;
  const void* pNext;
  VkDescriptorSet dstSet;
  uint32_t dstBinding;
  uint32_t dstArrayElement;
  uint32_t descriptorCount;
  VkDescriptorType descriptorType;
  const VkDescriptorImageInfo* pImageInfo;
  const VkDescriptorBufferInfo* pBufferInfo;
  const VkBufferView* pTexelBufferView;
};

struct VkMemoryBarrier {
  VkStructureType sType;
  const void* pNext;
  VkFlags srcAccessMask;
  VkFlags dstAccessMask;
};

struct VkBufferCopy {
  VkDeviceSize srcOffset;
  VkDeviceSize dstOffset;
  VkDeviceSize size;
};

// ------------------------------------------------------------------ VK_EXT_debug_utils

struct VkDebugUtilsMessengerCallbackDataEXT {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  const char* pMessageIdName;
  int32_t messageIdNumber;
  const char* pMessage;
  uint32_t queueLabelCount;
  const VkDebugUtilsLabelEXT* pQueueLabels;
  uint32_t cmdBufLabelCount;
  const VkDebugUtilsLabelEXT* pCmdBufLabels;
  uint32_t objectCount;
  const VkDebugUtilsObjectNameInfoEXT* pObjects;
};

using PFN_vkDebugUtilsMessengerCallbackEXT =
    VkBool32 (*)(VkDebugUtilsMessageSeverityFlagBitsEXT messageSeverity, VkFlags messageTypes,
                 const VkDebugUtilsMessengerCallbackDataEXT* pCallbackData, void* pUserData);

struct VkDebugUtilsMessengerCreateInfoEXT {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  VkFlags messageSeverity;
  VkFlags messageType;
  PFN_vkDebugUtilsMessengerCallbackEXT pfnUserCallback;
  void* pUserData;
};

// ------------------------------------------------------------------ entry points

using PFN_vkVoidFunction = void (*)();
using PFN_vkGetInstanceProcAddr = PFN_vkVoidFunction (*)(VkInstance instance, const char* pName);
using PFN_vkGetDeviceProcAddr = PFN_vkVoidFunction (*)(VkDevice device, const char* pName);

// Global (no instance).
using PFN_vkEnumerateInstanceVersion = VkResult (*)(uint32_t* pApiVersion);
using PFN_vkEnumerateInstanceExtensionProperties = VkResult (*)(const char* pLayerName,
                                                                uint32_t* pPropertyCount,
                                                                VkExtensionProperties* pProperties);
using PFN_vkEnumerateInstanceLayerProperties = VkResult (*)(uint32_t* pPropertyCount,
                                                            VkLayerProperties* pProperties);
using PFN_vkCreateInstance = VkResult (*)(const VkInstanceCreateInfo* pCreateInfo,
                                          const VkAllocationCallbacks* pAllocator,
                                          VkInstance* pInstance);

// Instance level.
using PFN_vkDestroyInstance = void (*)(VkInstance instance,
                                       const VkAllocationCallbacks* pAllocator);
using PFN_vkEnumeratePhysicalDevices = VkResult (*)(VkInstance instance,
                                                    uint32_t* pPhysicalDeviceCount,
                                                    VkPhysicalDevice* pPhysicalDevices);
using PFN_vkGetPhysicalDeviceProperties = void (*)(VkPhysicalDevice physicalDevice,
                                                   VkPhysicalDeviceProperties* pProperties);
using PFN_vkGetPhysicalDeviceProperties2 = void (*)(VkPhysicalDevice physicalDevice,
                                                    VkPhysicalDeviceProperties2* pProperties);
using PFN_vkGetPhysicalDeviceFeatures = void (*)(VkPhysicalDevice physicalDevice,
                                                 VkPhysicalDeviceFeatures* pFeatures);
using PFN_vkGetPhysicalDeviceFeatures2 = void (*)(VkPhysicalDevice physicalDevice,
                                                  VkPhysicalDeviceFeatures2* pFeatures);
using PFN_vkGetPhysicalDeviceQueueFamilyProperties =
    void (*)(VkPhysicalDevice physicalDevice, uint32_t* pQueueFamilyPropertyCount,
             VkQueueFamilyProperties* pQueueFamilyProperties);
using PFN_vkGetPhysicalDeviceMemoryProperties =
    void (*)(VkPhysicalDevice physicalDevice, VkPhysicalDeviceMemoryProperties* pMemoryProperties);
using PFN_vkGetPhysicalDeviceMemoryProperties2 =
    void (*)(VkPhysicalDevice physicalDevice, VkPhysicalDeviceMemoryProperties2* pMemoryProperties);
using PFN_vkEnumerateDeviceExtensionProperties = VkResult (*)(VkPhysicalDevice physicalDevice,
                                                              const char* pLayerName,
                                                              uint32_t* pPropertyCount,
                                                              VkExtensionProperties* pProperties);
using PFN_vkCreateDevice = VkResult (*)(VkPhysicalDevice physicalDevice,
                                        const VkDeviceCreateInfo* pCreateInfo,
                                        const VkAllocationCallbacks* pAllocator, VkDevice* pDevice);
using PFN_vkCreateDebugUtilsMessengerEXT =
    VkResult (*)(VkInstance instance, const VkDebugUtilsMessengerCreateInfoEXT* pCreateInfo,
                 const VkAllocationCallbacks* pAllocator, VkDebugUtilsMessengerEXT* pMessenger);

// Device level.
using PFN_vkDestroyDevice = void (*)(VkDevice device, const VkAllocationCallbacks* pAllocator);
using PFN_vkGetDeviceQueue = void (*)(VkDevice device, uint32_t queueFamilyIndex,
                                      uint32_t queueIndex, VkQueue* pQueue);
using PFN_vkDeviceWaitIdle = VkResult (*)(VkDevice device);
using PFN_vkCreateBuffer = VkResult (*)(VkDevice device, const VkBufferCreateInfo* pCreateInfo,
                                        const VkAllocationCallbacks* pAllocator, VkBuffer* pBuffer);
using PFN_vkDestroyBuffer = void (*)(VkDevice device, VkBuffer buffer,
                                     const VkAllocationCallbacks* pAllocator);
using PFN_vkGetBufferMemoryRequirements = void (*)(VkDevice device, VkBuffer buffer,
                                                   VkMemoryRequirements* pMemoryRequirements);
using PFN_vkAllocateMemory = VkResult (*)(VkDevice device,
                                          const VkMemoryAllocateInfo* pAllocateInfo,
                                          const VkAllocationCallbacks* pAllocator,
                                          VkDeviceMemory* pMemory);
using PFN_vkFreeMemory = void (*)(VkDevice device, VkDeviceMemory memory,
                                  const VkAllocationCallbacks* pAllocator);
using PFN_vkBindBufferMemory = VkResult (*)(VkDevice device, VkBuffer buffer, VkDeviceMemory memory,
                                            VkDeviceSize memoryOffset);
using PFN_vkMapMemory = VkResult (*)(VkDevice device, VkDeviceMemory memory, VkDeviceSize offset,
                                     VkDeviceSize size, VkFlags flags, void** ppData);
using PFN_vkUnmapMemory = void (*)(VkDevice device, VkDeviceMemory memory);
using PFN_vkCreateCommandPool = VkResult (*)(VkDevice device,
                                             const VkCommandPoolCreateInfo* pCreateInfo,
                                             const VkAllocationCallbacks* pAllocator,
                                             VkCommandPool* pCommandPool);
using PFN_vkDestroyCommandPool = void (*)(VkDevice device, VkCommandPool commandPool,
                                          const VkAllocationCallbacks* pAllocator);
using PFN_vkResetCommandPool = VkResult (*)(VkDevice device, VkCommandPool commandPool,
                                            VkFlags flags);
using PFN_vkAllocateCommandBuffers = VkResult (*)(VkDevice device,
                                                  const VkCommandBufferAllocateInfo* pAllocateInfo,
                                                  VkCommandBuffer* pCommandBuffers);
using PFN_vkBeginCommandBuffer = VkResult (*)(VkCommandBuffer commandBuffer,
                                              const VkCommandBufferBeginInfo* pBeginInfo);
using PFN_vkEndCommandBuffer = VkResult (*)(VkCommandBuffer commandBuffer);
using PFN_vkCreateFence = VkResult (*)(VkDevice device, const VkFenceCreateInfo* pCreateInfo,
                                       const VkAllocationCallbacks* pAllocator, VkFence* pFence);
using PFN_vkDestroyFence = void (*)(VkDevice device, VkFence fence,
                                    const VkAllocationCallbacks* pAllocator);
using PFN_vkResetFences = VkResult (*)(VkDevice device, uint32_t fenceCount,
                                       const VkFence* pFences);
using PFN_vkWaitForFences = VkResult (*)(VkDevice device, uint32_t fenceCount,
                                         const VkFence* pFences, VkBool32 waitAll,
                                         uint64_t timeout);
using PFN_vkQueueSubmit = VkResult (*)(VkQueue queue, uint32_t submitCount,
                                       const VkSubmitInfo* pSubmits, VkFence fence);
using PFN_vkCreateQueryPool = VkResult (*)(VkDevice device,
                                           const VkQueryPoolCreateInfo* pCreateInfo,
                                           const VkAllocationCallbacks* pAllocator,
                                           VkQueryPool* pQueryPool);
using PFN_vkDestroyQueryPool = void (*)(VkDevice device, VkQueryPool queryPool,
                                        const VkAllocationCallbacks* pAllocator);
using PFN_vkGetQueryPoolResults = VkResult (*)(VkDevice device, VkQueryPool queryPool,
                                               uint32_t firstQuery, uint32_t queryCount,
                                               size_t dataSize, void* pData, VkDeviceSize stride,
                                               VkFlags flags);
using PFN_vkCmdResetQueryPool = void (*)(VkCommandBuffer commandBuffer, VkQueryPool queryPool,
                                         uint32_t firstQuery, uint32_t queryCount);
using PFN_vkCmdWriteTimestamp = void (*)(VkCommandBuffer commandBuffer,
                                         VkPipelineStageFlagBits pipelineStage,
                                         VkQueryPool queryPool, uint32_t query);
using PFN_vkCreateShaderModule = VkResult (*)(VkDevice device,
                                              const VkShaderModuleCreateInfo* pCreateInfo,
                                              const VkAllocationCallbacks* pAllocator,
                                              VkShaderModule* pShaderModule);
using PFN_vkDestroyShaderModule = void (*)(VkDevice device, VkShaderModule shaderModule,
                                           const VkAllocationCallbacks* pAllocator);
using PFN_vkCreateDescriptorSetLayout =
    VkResult (*)(VkDevice device, const VkDescriptorSetLayoutCreateInfo* pCreateInfo,
                 const VkAllocationCallbacks* pAllocator, VkDescriptorSetLayout* pSetLayout);
using PFN_vkDestroyDescriptorSetLayout = void (*)(VkDevice device,
                                                  VkDescriptorSetLayout descriptorSetLayout,
                                                  const VkAllocationCallbacks* pAllocator);
using PFN_vkCreatePipelineLayout = VkResult (*)(VkDevice device,
                                                const VkPipelineLayoutCreateInfo* pCreateInfo,
                                                const VkAllocationCallbacks* pAllocator,
                                                VkPipelineLayout* pPipelineLayout);
using PFN_vkDestroyPipelineLayout = void (*)(VkDevice device, VkPipelineLayout pipelineLayout,
                                             const VkAllocationCallbacks* pAllocator);
using PFN_vkCreatePipelineCache = VkResult (*)(VkDevice device,
                                               const VkPipelineCacheCreateInfo* pCreateInfo,
                                               const VkAllocationCallbacks* pAllocator,
                                               VkPipelineCache* pPipelineCache);
using PFN_vkDestroyPipelineCache = void (*)(VkDevice device, VkPipelineCache pipelineCache,
                                            const VkAllocationCallbacks* pAllocator);
using PFN_vkGetPipelineCacheData = VkResult (*)(VkDevice device, VkPipelineCache pipelineCache,
                                                size_t* pDataSize, void* pData);
using PFN_vkCreateComputePipelines = VkResult (*)(VkDevice device, VkPipelineCache pipelineCache,
                                                  uint32_t createInfoCount,
                                                  const VkComputePipelineCreateInfo* pCreateInfos,
                                                  const VkAllocationCallbacks* pAllocator,
                                                  VkPipeline* pPipelines);
using PFN_vkDestroyPipeline = void (*)(VkDevice device, VkPipeline pipeline,
                                       const VkAllocationCallbacks* pAllocator);
using PFN_vkCreateDescriptorPool = VkResult (*)(VkDevice device,
                                                const VkDescriptorPoolCreateInfo* pCreateInfo,
                                                const VkAllocationCallbacks* pAllocator,
                                                VkDescriptorPool* pDescriptorPool);
using PFN_vkDestroyDescriptorPool = void (*)(VkDevice device, VkDescriptorPool descriptorPool,
                                             const VkAllocationCallbacks* pAllocator);
using PFN_vkResetDescriptorPool = VkResult (*)(VkDevice device, VkDescriptorPool descriptorPool,
                                               VkFlags flags);
using PFN_vkAllocateDescriptorSets = VkResult (*)(VkDevice device,
                                                  const VkDescriptorSetAllocateInfo* pAllocateInfo,
                                                  VkDescriptorSet* pDescriptorSets);
using PFN_vkUpdateDescriptorSets = void (*)(VkDevice device, uint32_t descriptorWriteCount,
                                            const VkWriteDescriptorSet* pDescriptorWrites,
                                            uint32_t descriptorCopyCount,
                                            const void* pDescriptorCopies);
using PFN_vkCmdBindPipeline = void (*)(VkCommandBuffer commandBuffer,
                                       VkPipelineBindPoint pipelineBindPoint, VkPipeline pipeline);
using PFN_vkCmdBindDescriptorSets = void (*)(
    VkCommandBuffer commandBuffer, VkPipelineBindPoint pipelineBindPoint, VkPipelineLayout layout,
    uint32_t firstSet, uint32_t descriptorSetCount, const VkDescriptorSet* pDescriptorSets,
    uint32_t dynamicOffsetCount, const uint32_t* pDynamicOffsets);
using PFN_vkCmdPushConstants = void (*)(VkCommandBuffer commandBuffer, VkPipelineLayout layout,
                                        VkFlags stageFlags, uint32_t offset, uint32_t size,
                                        const void* pValues);
using PFN_vkCmdDispatch = void (*)(VkCommandBuffer commandBuffer, uint32_t groupCountX,
                                   uint32_t groupCountY, uint32_t groupCountZ);
using PFN_vkCmdPipelineBarrier = void (*)(
    VkCommandBuffer commandBuffer, VkFlags srcStageMask, VkFlags dstStageMask,
    VkFlags dependencyFlags, uint32_t memoryBarrierCount, const VkMemoryBarrier* pMemoryBarriers,
    uint32_t bufferMemoryBarrierCount, const void* pBufferMemoryBarriers,
    uint32_t imageMemoryBarrierCount, const void* pImageMemoryBarriers);
using PFN_vkCmdCopyBuffer = void (*)(VkCommandBuffer commandBuffer, VkBuffer srcBuffer,
                                     VkBuffer dstBuffer, uint32_t regionCount,
                                     const VkBufferCopy* pRegions);
using PFN_vkCmdPushDescriptorSetKHR = void (*)(VkCommandBuffer commandBuffer,
                                               VkPipelineBindPoint pipelineBindPoint,
                                               VkPipelineLayout layout, uint32_t set,
                                               uint32_t descriptorWriteCount,
                                               const VkWriteDescriptorSet* pDescriptorWrites);

// Appends `node` (a Vulkan struct that starts with sType, pNext) to the pNext chain whose open
// end is *tail, and makes node's pNext the new open end.
template <typename T>
inline void Chain(void*** tail, T* node) {
  node->pNext = nullptr;
  **tail = node;
  *tail = &node->pNext;
}

// `value` rounded up to a multiple of `multiple` (sizes and offsets of Vulkan memory).
inline VkDeviceSize RoundUp(VkDeviceSize value, VkDeviceSize multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VK_API_H_
