/*
 * One WGPUDevice and its queue: buffers, copies, kernel dispatches and waiting.
 *
 * Dispatches and device-to-device copies are recorded into one pending command encoder and
 * submitted together when the host needs a result (a copy to or from the host, a
 * synchronization) or when a batch is full, as a browser's WebGPU runtime would: submitting is
 * the expensive part of WebGPU.  The scalar arguments of every dispatch in a batch live in one
 * uniform "arena" buffer, each at its own aligned offset, written once per submit.
 *
 * Steady-state launches repeat the same scalars and buffers, so scalar sets are also kept as
 * small immutable uniform buffers (filled at creation, no queue write) and the bind groups that
 * use them are cached; a launch then costs what a hand-written WebGPU dispatch costs.
 *
 * WebGPU copies need 4-byte aligned offsets and sizes; buffers are allocated in multiples of 4
 * bytes and unaligned copies go through an aligned bounce, so any byte range can be copied.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "webgpu_runtime.h"
#include "wgpu_api.h"

namespace tvm_runtime {
namespace webgpu {

/* What a WebGPU tensor's DLTensor::data points to. */
struct WebGPUBuffer {
  WGPUBuffer buffer = nullptr;
  uint64_t size = 0;  // bytes, a multiple of 4
  int32_t device_id = 0;
  uint64_t serial = 0;  // unique per device: bind-group cache keys never alias a freed buffer
};

/* A compiled kernel on one device. */
struct WebGPUPipeline {
  WGPUComputePipeline pipeline = nullptr;
  WGPUBindGroupLayout layout = nullptr;
  uint64_t serial = 0;
};

/* Comma-separated feature names of TVM_WEBGPU_DISABLE_FEATURES ("shader-f16") are not
 * requested even when the adapter has them: how to test what a smaller device would do. */
constexpr const char* kDisableFeaturesEnvVar = "TVM_WEBGPU_DISABLE_FEATURES";
/* True when `name` ("shader-f16") is listed in TVM_WEBGPU_DISABLE_FEATURES. */
bool FeatureDisabled(const char* name);

/* TVM_WEBGPU_SCALAR_CACHE=0 sends every launch's scalars through the per-batch arena. */
constexpr const char* kScalarCacheEnvVar = "TVM_WEBGPU_SCALAR_CACHE";

class WebGPUDevice {
 public:
  WebGPUDevice(int32_t device_id, const AdapterInfo& adapter, WGPUInstance instance,
               const WgpuFunctions& fn);
  WebGPUDevice(const WebGPUDevice&) = delete;
  WebGPUDevice& operator=(const WebGPUDevice&) = delete;

  const AdapterInfo& adapter() const { return adapter_; }
  const WGPULimits& limits() const { return limits_; }
  bool shader_f16() const { return shader_f16_; }

  WebGPUBuffer* Allocate(uint64_t nbytes);
  void Free(WebGPUBuffer* buf);

  void CopyFromHost(const void* src, WebGPUBuffer* dst, uint64_t dst_offset, uint64_t nbytes);
  void CopyToHost(WebGPUBuffer* src, uint64_t src_offset, void* dst, uint64_t nbytes);
  void CopyOnDevice(WebGPUBuffer* src, uint64_t src_offset, WebGPUBuffer* dst, uint64_t dst_offset,
                    uint64_t nbytes);

  /* Compiles `wgsl` and makes its pipeline with storage buffers at bindings 0..n-1 (read-only
   * where `writes[i]` is false) and the scalar uniform at binding n.  ValueError with the
   * compiler's message when the shader is invalid. */
  WebGPUPipeline CreatePipeline(const std::string& kernel, const std::string& wgsl,
                                const std::vector<bool>& writes);

  /* Records one dispatch of `pipeline`; `pod` holds the uniform struct's bytes. */
  void Dispatch(const std::string& kernel, const WebGPUPipeline& pipeline,
                WebGPUBuffer* const* buffers, size_t num_buffers, const void* pod, size_t pod_bytes,
                const uint32_t grid[3]);

  /* Submits what is pending and waits until the device is idle. */
  void Sync();

  /* Timestamps between commands (runtime.timer.webgpu): the device was created with the
   * timestamp-query features, which the adapter may lack or TVM_WEBGPU_DISABLE_FEATURES
   * ("timestamp-query") may withhold. */
  bool timestamps() const { return timestamps_; }
  /* A set of two timestamp queries; release it with ReleaseTimestamps. */
  WGPUQuerySet CreateTimestamps();
  void ReleaseTimestamps(WGPUQuerySet set);
  /* Records timestamp `index` of `set` after the commands recorded so far. */
  void WriteTimestamp(WGPUQuerySet set, uint32_t index);
  /* Submits what is pending, waits for it, and returns timestamp 1 - timestamp 0 in ns. */
  int64_t TimestampSpanNs(WGPUQuerySet set);

  /* Counters for diagnostics and tests: submits, dispatches, live buffers and bytes. */
  struct Counters {
    uint64_t submits = 0;
    uint64_t dispatches = 0;
    uint64_t live_buffers = 0;
    uint64_t live_bytes = 0;
  };
  Counters counters();

 private:
  static void OnUncapturedError(const WGPUDevice* device, WGPUErrorType type,
                                WGPUStringView message, void* self, void*);
  /* Runs wgpu-native's event processing until `*done` (set by a callback); never hangs. */
  void WaitUntil(const bool* done, const char* what);
  void ThrowIfDeviceError(const char* during);
  WGPUCommandEncoder Encoder();
  void FlushLocked();
  void CopyToHostLocked(WebGPUBuffer* src, uint64_t src_offset, void* dst, uint64_t nbytes);
  void EnsureStaging(uint64_t nbytes);
  uint64_t ReserveUniform(size_t pod_bytes);
  /* The immutable uniform buffer holding these bytes, or nullptr when the cache is full. */
  WGPUBuffer CachedUniform(const void* pod, size_t pod_bytes);
  WGPUBindGroup CachedBindGroup(const WebGPUPipeline& pipeline, WebGPUBuffer* const* buffers,
                                size_t num_buffers, WGPUBuffer uniform, size_t uniform_bytes);
  WGPUBindGroup CreateBindGroup(const WebGPUPipeline& pipeline, WebGPUBuffer* const* buffers,
                                size_t num_buffers, WGPUBuffer uniform, uint64_t uniform_offset,
                                size_t uniform_bytes);

  int32_t device_id_;
  AdapterInfo adapter_;
  WGPUInstance instance_;
  const WgpuFunctions& f_;
  WGPUDevice device_ = nullptr;
  WGPUQueue queue_ = nullptr;
  WGPULimits limits_{};
  bool shader_f16_ = false;
  bool timestamps_ = false;
  bool scalar_cache_ = true;

  std::mutex mu_;  // everything below
  WGPUCommandEncoder encoder_ = nullptr;
  size_t pending_dispatches_ = 0;
  WGPUBuffer uniform_buffer_ = nullptr;
  uint64_t uniform_capacity_ = 0;
  std::vector<uint8_t> uniform_host_;  // the arena's bytes for the pending batch
  uint64_t uniform_used_ = 0;
  WGPUBuffer staging_ = nullptr;  // MapRead buffer for reads back to the host
  WebGPUBuffer resolved_;         // where TimestampSpanNs resolves a query set (16 bytes)
  uint64_t staging_size_ = 0;
  uint64_t next_serial_ = 0;
  std::map<std::string, WGPUBuffer> uniform_cache_;  // scalar bytes -> immutable uniform
  // {pipeline serial, uniform buffer, buffer serials...} -> bind group
  std::map<std::vector<uint64_t>, WGPUBindGroup> bind_groups_;
  Counters counters_;

  std::mutex error_mu_;
  std::string device_error_;  // uncaptured errors since the last check
};

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_DEVICE_H_
