#include "vulkan_pipeline_cache.h"

#include <tvm_runtime/c_api.h>

#include <cstdio>
#include <cstring>

namespace tvm_runtime {
namespace vulkan {

namespace {

// Part of every key: bump when what a given shader builds to changes here.
constexpr const char* kCacheKind = "vulkan-pipeline/1";
// VkPipelineCacheHeaderVersionOne: header size, header version, vendor id, device id, UUID.
constexpr size_t kHeaderOneSize = 16 + kVkUuidSize;
constexpr uint32_t kHeaderVersionOne = 1;

uint32_t Get32(const std::string& data, size_t at) {
  uint32_t v;
  std::memcpy(&v, data.data() + at, sizeof(v));  // the driver's byte order: this machine's
  return v;
}

std::string Hex(const uint8_t* bytes, size_t n) {
  std::string out;
  char buf[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

}  // namespace

backend::PersistentCache PipelineCache() {
  static backend::CacheStats stats;
  return backend::PersistentCache(
      backend::CachePolicy::FromEnvironment(kCacheEnvPrefix, "tvm-runtime/vulkan"), &stats);
}

backend::CacheKey PipelineCacheKey(const PhysicalDeviceInfo& device, const std::string& entry_point,
                                   const std::string& pipeline, const uint32_t* spirv,
                                   size_t num_words) {
  const VkPhysicalDeviceProperties& p = device.props;
  backend::CacheKey key(kCacheKind);
  key.Add("runtime", TVMRuntimeVersion())
      .Add("device", p.deviceName)
      .Add("vendor_id", std::to_string(p.vendorID))
      .Add("device_id", std::to_string(p.deviceID))
      .Add("driver_version", std::to_string(p.driverVersion))
      .Add("driver", device.driver_name + " " + device.driver_info)
      .Add("api_version", std::to_string(p.apiVersion))
      .Add("pipeline_cache_uuid", Hex(p.pipelineCacheUUID, kVkUuidSize))
      .Add("entry_point", entry_point)
      .Add("pipeline", pipeline)
      .AddContent("spirv", spirv, num_words * sizeof(uint32_t));
  return key;
}

const char* CheckPipelineCacheHeader(const std::string& data, const PhysicalDeviceInfo& device) {
  const VkPhysicalDeviceProperties& p = device.props;
  if (data.size() < kHeaderOneSize) return "pipeline-cache data shorter than its header";
  if (Get32(data, 0) < kHeaderOneSize || Get32(data, 0) > data.size()) {
    return "pipeline-cache header of an impossible size";
  }
  if (Get32(data, 4) != kHeaderVersionOne) return "unknown pipeline-cache header version";
  if (Get32(data, 8) != p.vendorID || Get32(data, 12) != p.deviceID) {
    return "pipeline-cache data of another vendor or device";
  }
  if (std::memcmp(data.data() + 16, p.pipelineCacheUUID, kVkUuidSize) != 0) {
    return "pipeline-cache data of another driver build (pipelineCacheUUID differs)";
  }
  return nullptr;
}

}  // namespace vulkan
}  // namespace tvm_runtime
