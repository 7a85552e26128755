/*
 * The persistent VkPipelineCache of Vulkan kernels: the shared policy of
 * tvm_runtime/backend/cache/persistent_cache.h in ~/.cache/tvm-runtime/vulkan
 * (TVM_VULKAN_CACHE_DIR, TVM_VULKAN_CACHE_DISABLE, TVM_VULKAN_CACHE_MAX_SIZE).  One entry per
 * kernel and device: the pipeline-cache data the driver returned after building the kernel's
 * pipeline, handed back as the initial data of the pipeline cache the next process builds that
 * pipeline with.
 *
 * Besides the entry's own checks, the data's Vulkan header (version one: vendor id, device id,
 * pipelineCacheUUID) must match the device before a driver sees it; drivers are required to
 * ignore foreign data, but not all of them are careful about it.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_PIPELINE_CACHE_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_PIPELINE_CACHE_H_

#include <tvm_runtime/backend/cache/persistent_cache.h>

#include <string>

#include "vk_api.h"
#include "vulkan_physical_device.h"

namespace tvm_runtime {
namespace vulkan {

constexpr const char* kCacheEnvPrefix = "TVM_VULKAN_CACHE";

/* The cache as the environment configures it now; its counters live as long as the process. */
backend::PersistentCache PipelineCache();

/* `pipeline` describes the layout the pipeline is built with (bindings, push constants). */
backend::CacheKey PipelineCacheKey(const PhysicalDeviceInfo& device, const std::string& entry_point,
                                   const std::string& pipeline, const uint32_t* spirv,
                                   size_t num_words);

/* Why `data` is not pipeline-cache data of `device` (nullptr when it is). */
const char* CheckPipelineCacheHeader(const std::string& data, const PhysicalDeviceInfo& device);

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_PIPELINE_CACHE_H_
