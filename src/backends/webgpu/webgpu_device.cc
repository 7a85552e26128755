#include "webgpu_device.h"

#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace tvm_runtime {
namespace webgpu {

namespace {

using backend::ThrowError;

constexpr size_t kMaxBatchedDispatches = 256;
// Scalar sets up to this size get their own immutable uniform buffer, up to this many of them;
// beyond, scalars go through the per-batch arena.
constexpr size_t kMaxCachedPodBytes = 256;
constexpr size_t kMaxCachedUniforms = 4096;
constexpr size_t kMaxCachedBindGroups = 512;
constexpr uint64_t kInitialUniformArena = 64 * 1024;
// Event processing rounds before a wait is declared stuck (each round blocks in wgpuDevicePoll
// until submitted work is done, so this only trips when a callback never comes).
constexpr int kMaxWaitRounds = 100000;

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Leave every limit "undefined" (the default) except those compute kernels care about, which
 * are raised to what the adapter supports. */
WGPULimits RequiredLimits(const WGPULimits& a) {
  WGPULimits l;
  std::memset(&l, 0xff, sizeof(l));  // WGPU_LIMIT_U32_UNDEFINED / WGPU_LIMIT_U64_UNDEFINED
  l.nextInChain = nullptr;
  l.maxBindingsPerBindGroup = a.maxBindingsPerBindGroup;
  l.maxStorageBuffersPerShaderStage = a.maxStorageBuffersPerShaderStage;
  l.maxUniformBufferBindingSize = a.maxUniformBufferBindingSize;
  l.maxStorageBufferBindingSize = a.maxStorageBufferBindingSize;
  l.maxBufferSize = a.maxBufferSize;
  l.maxComputeWorkgroupStorageSize = a.maxComputeWorkgroupStorageSize;
  l.maxComputeInvocationsPerWorkgroup = a.maxComputeInvocationsPerWorkgroup;
  l.maxComputeWorkgroupSizeX = a.maxComputeWorkgroupSizeX;
  l.maxComputeWorkgroupSizeY = a.maxComputeWorkgroupSizeY;
  l.maxComputeWorkgroupSizeZ = a.maxComputeWorkgroupSizeZ;
  l.maxComputeWorkgroupsPerDimension = a.maxComputeWorkgroupsPerDimension;
  return l;
}

struct DeviceRequest {
  bool done = false;
  WGPUDevice device = nullptr;
  std::string message;
};

struct ScopeResult {
  bool done = false;
  WGPUErrorType type = WGPUErrorType_NoError;
  std::string message;
};

struct MapResult {
  bool done = false;
  bool ok = false;
  std::string message;
};

}  // namespace

bool FeatureDisabled(const char* name) {
  const char* env = std::getenv(kDisableFeaturesEnvVar);
  if (env == nullptr) return false;
  std::string list = std::string(",") + env + ",";
  return list.find(std::string(",") + name + ",") != std::string::npos;
}

WebGPUDevice::WebGPUDevice(int32_t device_id, const AdapterInfo& adapter, WGPUInstance instance,
                           const WgpuFunctions& fn)
    : device_id_(device_id), adapter_(adapter), instance_(instance), f_(fn) {
  std::vector<WGPUFeatureName> features;
  if (adapter.shader_f16 && !FeatureDisabled("shader-f16")) {
    features.push_back(WGPUFeatureName_ShaderF16);
  }
  const bool shader_f16 = !features.empty();
  // Timestamps written between commands (not only at pass boundaries) need wgpu-native's
  // TimestampQueryInsideEncoders on top of WebGPU's timestamp-query.
  const auto inside_encoders =
      static_cast<WGPUFeatureName>(WGPUNativeFeature_TimestampQueryInsideEncoders);
  const bool timestamps =
      !FeatureDisabled("timestamp-query") &&
      f_.wgpuAdapterHasFeature(adapter.adapter, WGPUFeatureName_TimestampQuery) != 0 &&
      f_.wgpuAdapterHasFeature(adapter.adapter, inside_encoders) != 0;
  if (timestamps) {
    features.push_back(WGPUFeatureName_TimestampQuery);
    features.push_back(inside_encoders);
  }
  WGPULimits required = RequiredLimits(adapter.limits);
  WGPUDeviceDescriptor desc{};
  desc.label = StringView("tvm-runtime", 11);
  desc.requiredFeatureCount = features.size();
  desc.requiredFeatures = features.data();
  desc.requiredLimits = &required;
  desc.defaultQueue.label = NullStringView();
  desc.uncapturedErrorCallbackInfo.callback = &WebGPUDevice::OnUncapturedError;
  desc.uncapturedErrorCallbackInfo.userdata1 = this;
  DeviceRequest req;
  WGPUCallbackInfo<WGPURequestDeviceCallback> cb{};
  cb.mode = WGPUCallbackMode_AllowProcessEvents;
  cb.userdata1 = &req;
  cb.callback = [](WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message,
                   void* user, void*) {
    auto* r = static_cast<DeviceRequest*>(user);
    if (status == WGPURequestDeviceStatus_Success) r->device = device;
    r->message = ToString(message);
    r->done = true;
  };
  f_.wgpuAdapterRequestDevice(adapter.adapter, &desc, cb);
  WaitUntil(&req.done, "creating the device");
  if (req.device == nullptr) {
    ThrowError("RuntimeError", "WebGPU adapter '" + adapter.name + "' (" + adapter.BackendName() +
                                   ") refused to create a device: " + req.message);
  }
  device_ = req.device;
  queue_ = f_.wgpuDeviceGetQueue(device_);
  limits_ = adapter.limits;
  if (f_.wgpuDeviceGetLimits(device_, &limits_) != WGPUStatus_Success) limits_ = adapter.limits;
  limits_.nextInChain = nullptr;
  shader_f16_ = shader_f16;
  timestamps_ = timestamps;
  const char* cache = std::getenv(kScalarCacheEnvVar);
  scalar_cache_ = cache == nullptr || std::string(cache) != "0";
}

void WebGPUDevice::OnUncapturedError(const WGPUDevice*, WGPUErrorType type, WGPUStringView message,
                                     void* self, void*) {
  auto* d = static_cast<WebGPUDevice*>(self);
  std::lock_guard<std::mutex> lock(d->error_mu_);
  if (!d->device_error_.empty()) d->device_error_ += "\n";
  d->device_error_ +=
      (type == WGPUErrorType_OutOfMemory ? "out of memory: " : "") + ToString(message);
}

void WebGPUDevice::ThrowIfDeviceError(const char* during) {
  std::string error;
  {
    std::lock_guard<std::mutex> lock(error_mu_);
    error.swap(device_error_);
  }
  if (!error.empty()) {
    ThrowError("RuntimeError", std::string("WebGPU error while ") + during + " on '" +
                                   adapter_.name + "': " + error);
  }
}

void WebGPUDevice::WaitUntil(const bool* done, const char* what) {
  for (int round = 0; !*done; ++round) {
    if (round >= kMaxWaitRounds) {
      ThrowError("RuntimeError", std::string("WebGPU: no answer from wgpu-native while ") + what);
    }
    if (device_ != nullptr) f_.wgpuDevicePoll(device_, /*wait=*/1, nullptr);
    f_.wgpuInstanceProcessEvents(instance_);
    if (!*done && round > 100) std::this_thread::yield();
  }
}

WebGPUDevice::Counters WebGPUDevice::counters() {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

WebGPUBuffer* WebGPUDevice::Allocate(uint64_t nbytes) {
  uint64_t size = AlignUp(std::max<uint64_t>(nbytes, 4), 4);
  if (size > limits_.maxBufferSize) {
    ThrowError("ValueError", "cannot allocate " + std::to_string(nbytes) +
                                 " bytes on WebGPU device '" + adapter_.name +
                                 "': its largest buffer is " +
                                 std::to_string(limits_.maxBufferSize) + " bytes");
  }
  WGPUBufferDescriptor desc{};
  desc.label = NullStringView();
  desc.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
  desc.size = size;
  WGPUBuffer buffer = f_.wgpuDeviceCreateBuffer(device_, &desc);
  ThrowIfDeviceError("allocating a buffer");
  if (buffer == nullptr) {
    ThrowError("RuntimeError", "WebGPU could not allocate " + std::to_string(nbytes) + " bytes");
  }
  auto* out = new WebGPUBuffer{buffer, size, device_id_, 0};
  std::lock_guard<std::mutex> lock(mu_);
  out->serial = ++next_serial_;
  counters_.live_buffers += 1;
  counters_.live_bytes += size;
  return out;
}

void WebGPUDevice::Free(WebGPUBuffer* buf) {
  // Release, never destroy: recorded but unsubmitted commands may still use the buffer, and
  // wgpu-native keeps it alive until the device is done with it.
  std::lock_guard<std::mutex> lock(mu_);
  // Cached bind groups naming this buffer would keep its memory alive: drop them.
  for (auto it = bind_groups_.begin(); it != bind_groups_.end();) {
    const std::vector<uint64_t>& key = it->first;
    if (std::find(key.begin() + 2, key.end(), buf->serial) != key.end()) {
      f_.wgpuBindGroupRelease(it->second);
      it = bind_groups_.erase(it);
    } else {
      ++it;
    }
  }
  f_.wgpuBufferRelease(buf->buffer);
  counters_.live_buffers -= 1;
  counters_.live_bytes -= buf->size;
  delete buf;
}

WGPUCommandEncoder WebGPUDevice::Encoder() {
  if (encoder_ == nullptr) {
    WGPULabelOnlyDescriptor desc{nullptr, NullStringView()};
    encoder_ = f_.wgpuDeviceCreateCommandEncoder(device_, &desc);
  }
  return encoder_;
}

void WebGPUDevice::FlushLocked() {
  if (encoder_ == nullptr) return;
  if (uniform_used_ != 0) {
    f_.wgpuQueueWriteBuffer(queue_, uniform_buffer_, 0, uniform_host_.data(), uniform_used_);
  }
  WGPULabelOnlyDescriptor desc{nullptr, NullStringView()};
  WGPUCommandBuffer commands = f_.wgpuCommandEncoderFinish(encoder_, &desc);
  f_.wgpuCommandEncoderRelease(encoder_);
  encoder_ = nullptr;
  pending_dispatches_ = 0;
  uniform_used_ = 0;
  if (commands != nullptr) {
    f_.wgpuQueueSubmitForIndex(queue_, 1, &commands);
    f_.wgpuCommandBufferRelease(commands);
    counters_.submits += 1;
  }
  ThrowIfDeviceError("submitting kernels");
}

void WebGPUDevice::Sync() {
  std::lock_guard<std::mutex> lock(mu_);
  FlushLocked();
  f_.wgpuDevicePoll(device_, /*wait=*/1, nullptr);
  ThrowIfDeviceError("waiting for the device");
}

WGPUQuerySet WebGPUDevice::CreateTimestamps() {
  std::lock_guard<std::mutex> lock(mu_);
  WGPUQuerySetDescriptor desc{};
  desc.label = NullStringView();
  desc.type = WGPUQueryType_Timestamp;
  desc.count = 2;
  WGPUQuerySet set = f_.wgpuDeviceCreateQuerySet(device_, &desc);
  ThrowIfDeviceError("creating timestamp queries");
  if (set == nullptr) ThrowError("RuntimeError", "WebGPU could not create timestamp queries");
  return set;
}

void WebGPUDevice::ReleaseTimestamps(WGPUQuerySet set) {
  std::lock_guard<std::mutex> lock(mu_);
  f_.wgpuQuerySetRelease(set);  // commands recorded with it keep it alive until they ran
}

void WebGPUDevice::WriteTimestamp(WGPUQuerySet set, uint32_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  f_.wgpuCommandEncoderWriteTimestamp(Encoder(), set, index);
}

int64_t WebGPUDevice::TimestampSpanNs(WGPUQuerySet set) {
  std::lock_guard<std::mutex> lock(mu_);
  if (resolved_.buffer == nullptr) {
    WGPUBufferDescriptor desc{};
    desc.label = NullStringView();
    desc.usage = WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc;
    desc.size = 2 * sizeof(uint64_t);
    resolved_.buffer = f_.wgpuDeviceCreateBuffer(device_, &desc);
    resolved_.size = desc.size;
    resolved_.device_id = device_id_;
    ThrowIfDeviceError("allocating the timestamp buffer");
  }
  f_.wgpuCommandEncoderResolveQuerySet(Encoder(), set, 0, 2, resolved_.buffer, 0);
  uint64_t ticks[2] = {0, 0};
  CopyToHostLocked(&resolved_, 0, ticks, sizeof(ticks));  // submits and waits
  if (ticks[1] <= ticks[0]) return 0;
  // Raw ticks unless the instance normalises them (then the period is 1).
  const double period = f_.wgpuQueueGetTimestampPeriod(queue_);
  return static_cast<int64_t>(std::llround(static_cast<double>(ticks[1] - ticks[0]) * period));
}

void WebGPUDevice::EnsureStaging(uint64_t nbytes) {
  if (staging_ != nullptr && staging_size_ >= nbytes) return;
  if (staging_ != nullptr) f_.wgpuBufferRelease(staging_);
  uint64_t size = std::max<uint64_t>(AlignUp(nbytes, 4), 1 << 16);
  WGPUBufferDescriptor desc{};
  desc.label = NullStringView();
  desc.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
  desc.size = size;
  staging_ = f_.wgpuDeviceCreateBuffer(device_, &desc);
  staging_size_ = size;
  ThrowIfDeviceError("allocating a staging buffer");
}

void WebGPUDevice::CopyToHostLocked(WebGPUBuffer* src, uint64_t src_offset, void* dst,
                                    uint64_t nbytes) {
  uint64_t begin = src_offset / 4 * 4;
  uint64_t end = AlignUp(src_offset + nbytes, 4);
  uint64_t span = end - begin;
  EnsureStaging(span);
  f_.wgpuCommandEncoderCopyBufferToBuffer(Encoder(), src->buffer, begin, staging_, 0, span);
  FlushLocked();
  MapResult map;
  WGPUCallbackInfo<WGPUBufferMapCallback> cb{};
  cb.mode = WGPUCallbackMode_AllowProcessEvents;
  cb.userdata1 = &map;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* user, void*) {
    auto* m = static_cast<MapResult*>(user);
    m->ok = status == WGPUMapAsyncStatus_Success;
    m->message = ToString(message);
    m->done = true;
  };
  f_.wgpuBufferMapAsync(staging_, WGPUMapMode_Read, 0, static_cast<size_t>(span), cb);
  WaitUntil(&map.done, "reading a buffer back");
  ThrowIfDeviceError("reading a buffer back");
  if (!map.ok) ThrowError("RuntimeError", "WebGPU could not map a buffer: " + map.message);
  const void* data = f_.wgpuBufferGetConstMappedRange(staging_, 0, static_cast<size_t>(span));
  if (data != nullptr) {
    std::memcpy(dst, static_cast<const char*>(data) + (src_offset - begin), nbytes);
  }
  f_.wgpuBufferUnmap(staging_);
  if (data == nullptr) ThrowError("RuntimeError", "WebGPU returned no mapped range");
}

void WebGPUDevice::CopyToHost(WebGPUBuffer* src, uint64_t src_offset, void* dst, uint64_t nbytes) {
  std::lock_guard<std::mutex> lock(mu_);
  CopyToHostLocked(src, src_offset, dst, nbytes);
}

void WebGPUDevice::CopyFromHost(const void* src, WebGPUBuffer* dst, uint64_t dst_offset,
                                uint64_t nbytes) {
  std::lock_guard<std::mutex> lock(mu_);
  // Queue writes run before commands that are recorded but not yet submitted: submit those
  // first so the write lands after them, in program order.
  FlushLocked();
  if (dst_offset % 4 == 0 && nbytes % 4 == 0) {
    f_.wgpuQueueWriteBuffer(queue_, dst->buffer, dst_offset, src, static_cast<size_t>(nbytes));
  } else {
    // Merge into the enclosing aligned words so the bytes around the range are kept.
    uint64_t begin = dst_offset / 4 * 4;
    uint64_t end = AlignUp(dst_offset + nbytes, 4);
    std::vector<char> words(end - begin);
    CopyToHostLocked(dst, begin, words.data(), words.size());
    std::memcpy(words.data() + (dst_offset - begin), src, nbytes);
    f_.wgpuQueueWriteBuffer(queue_, dst->buffer, begin, words.data(), words.size());
  }
  ThrowIfDeviceError("writing a buffer");
}

void WebGPUDevice::CopyOnDevice(WebGPUBuffer* src, uint64_t src_offset, WebGPUBuffer* dst,
                                uint64_t dst_offset, uint64_t nbytes) {
  bool aligned = src_offset % 4 == 0 && dst_offset % 4 == 0 && nbytes % 4 == 0;
  if (aligned && src->buffer != dst->buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    f_.wgpuCommandEncoderCopyBufferToBuffer(Encoder(), src->buffer, src_offset, dst->buffer,
                                            dst_offset, nbytes);
    return;
  }
  // WebGPU copies neither unaligned ranges nor within one buffer: bounce through the host.
  std::vector<char> bounce(nbytes);
  CopyToHost(src, src_offset, bounce.data(), nbytes);
  CopyFromHost(bounce.data(), dst, dst_offset, nbytes);
}

WebGPUPipeline WebGPUDevice::CreatePipeline(const std::string& kernel, const std::string& wgsl,
                                            const std::vector<bool>& writes) {
  std::lock_guard<std::mutex> lock(mu_);
  f_.wgpuDevicePushErrorScope(device_, WGPUErrorFilter_Validation);
  WGPUShaderSourceWGSL source{};
  source.chain.sType = WGPUSType_ShaderSourceWGSL;
  source.code = StringView(wgsl.data(), wgsl.size());
  WGPUShaderModuleDescriptor module_desc{};
  module_desc.nextInChain = &source.chain;
  module_desc.label = StringView(kernel.data(), kernel.size());
  WGPUShaderModule module = f_.wgpuDeviceCreateShaderModule(device_, &module_desc);

  std::vector<WGPUBindGroupLayoutEntry> entries(writes.size() + 1);
  for (size_t i = 0; i < entries.size(); ++i) {
    WGPUBindGroupLayoutEntry& e = entries[i];
    std::memset(&e, 0, sizeof(e));
    e.binding = static_cast<uint32_t>(i);
    e.visibility = WGPUShaderStage_Compute;
    if (i < writes.size()) {
      e.buffer.type =
          writes[i] ? WGPUBufferBindingType_Storage : WGPUBufferBindingType_ReadOnlyStorage;
    } else {
      e.buffer.type = WGPUBufferBindingType_Uniform;
    }
  }
  WGPUBindGroupLayoutDescriptor layout_desc{};
  layout_desc.label = NullStringView();
  layout_desc.entryCount = entries.size();
  layout_desc.entries = entries.data();
  WGPUBindGroupLayout layout = f_.wgpuDeviceCreateBindGroupLayout(device_, &layout_desc);
  WGPUPipelineLayoutDescriptor pl_desc{};
  pl_desc.label = NullStringView();
  pl_desc.bindGroupLayoutCount = 1;
  pl_desc.bindGroupLayouts = &layout;
  WGPUPipelineLayout pipeline_layout = f_.wgpuDeviceCreatePipelineLayout(device_, &pl_desc);
  WGPUComputePipelineDescriptor desc{};
  desc.label = StringView(kernel.data(), kernel.size());
  desc.layout = pipeline_layout;
  desc.compute.module = module;
  desc.compute.entryPoint = StringView(kernel.data(), kernel.size());
  WGPUComputePipeline pipeline = f_.wgpuDeviceCreateComputePipeline(device_, &desc);

  ScopeResult scope;
  WGPUCallbackInfo<WGPUPopErrorScopeCallback> cb{};
  cb.mode = WGPUCallbackMode_AllowProcessEvents;
  cb.userdata1 = &scope;
  cb.callback = [](WGPUPopErrorScopeStatus, WGPUErrorType type, WGPUStringView message, void* user,
                   void*) {
    auto* s = static_cast<ScopeResult*>(user);
    s->type = type;
    s->message = ToString(message);
    s->done = true;
  };
  f_.wgpuDevicePopErrorScope(device_, cb);
  WaitUntil(&scope.done, "compiling a shader");
  if (pipeline_layout != nullptr) f_.wgpuPipelineLayoutRelease(pipeline_layout);
  if (module != nullptr) f_.wgpuShaderModuleRelease(module);
  bool failed = scope.type != WGPUErrorType_NoError || pipeline == nullptr;
  if (failed) {
    if (pipeline != nullptr) f_.wgpuComputePipelineRelease(pipeline);
    if (layout != nullptr) f_.wgpuBindGroupLayoutRelease(layout);
    ThrowError("ValueError",
               "WebGPU cannot compile kernel '" + kernel + "' on '" + adapter_.name +
                   "': " + (scope.message.empty() ? "pipeline creation failed" : scope.message));
  }
  return WebGPUPipeline{pipeline, layout, ++next_serial_};
}

uint64_t WebGPUDevice::ReserveUniform(size_t pod_bytes) {
  uint64_t align = std::max<uint64_t>(limits_.minUniformBufferOffsetAlignment, 16);
  uint64_t stride = AlignUp(std::max<size_t>(pod_bytes, 16), align);
  if (uniform_used_ + stride > uniform_capacity_ || pending_dispatches_ >= kMaxBatchedDispatches) {
    FlushLocked();
  }
  if (stride > uniform_capacity_) {
    // Submitted commands keep the old arena alive until they are done with it.
    if (uniform_buffer_ != nullptr) f_.wgpuBufferRelease(uniform_buffer_);
    uint64_t capacity = std::max<uint64_t>(kInitialUniformArena, AlignUp(stride, 4096));
    WGPUBufferDescriptor desc{};
    desc.label = NullStringView();
    desc.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
    desc.size = capacity;
    uniform_buffer_ = f_.wgpuDeviceCreateBuffer(device_, &desc);
    uniform_capacity_ = capacity;
    uniform_host_.assign(capacity, 0);
    ThrowIfDeviceError("allocating the scalar-argument buffer");
  }
  uint64_t offset = uniform_used_;
  uniform_used_ += stride;
  return offset;
}

WGPUBuffer WebGPUDevice::CachedUniform(const void* pod, size_t pod_bytes) {
  std::string key(static_cast<const char*>(pod), pod_bytes);
  auto it = uniform_cache_.find(key);
  if (it != uniform_cache_.end()) return it->second;
  if (uniform_cache_.size() >= kMaxCachedUniforms) return nullptr;
  WGPUBufferDescriptor desc{};
  desc.label = NullStringView();
  desc.usage = WGPUBufferUsage_Uniform;
  desc.size = AlignUp(std::max<size_t>(pod_bytes, 16), 16);
  desc.mappedAtCreation = 1;
  WGPUBuffer buffer = f_.wgpuDeviceCreateBuffer(device_, &desc);
  void* data = buffer != nullptr ? f_.wgpuBufferGetMappedRange(buffer, 0, desc.size) : nullptr;
  if (data == nullptr) {
    if (buffer != nullptr) f_.wgpuBufferRelease(buffer);
    ThrowIfDeviceError("allocating a scalar-argument buffer");
    return nullptr;  // fall back to the arena
  }
  std::memset(data, 0, desc.size);
  std::memcpy(data, pod, pod_bytes);
  f_.wgpuBufferUnmap(buffer);
  uniform_cache_.emplace(std::move(key), buffer);
  return buffer;
}

WGPUBindGroup WebGPUDevice::CreateBindGroup(const WebGPUPipeline& pipeline,
                                            WebGPUBuffer* const* buffers, size_t num_buffers,
                                            WGPUBuffer uniform, uint64_t uniform_offset,
                                            size_t uniform_bytes) {
  std::vector<WGPUBindGroupEntry> entries(num_buffers + 1);
  for (size_t i = 0; i <= num_buffers; ++i) {
    WGPUBindGroupEntry& e = entries[i];
    std::memset(&e, 0, sizeof(e));
    e.binding = static_cast<uint32_t>(i);
    if (i < num_buffers) {
      e.buffer = buffers[i]->buffer;
      e.size = buffers[i]->size;
    } else {
      e.buffer = uniform;
      e.offset = uniform_offset;
      e.size = uniform_bytes;
    }
  }
  WGPUBindGroupDescriptor desc{};
  desc.label = NullStringView();
  desc.layout = pipeline.layout;
  desc.entryCount = entries.size();
  desc.entries = entries.data();
  return f_.wgpuDeviceCreateBindGroup(device_, &desc);
}

WGPUBindGroup WebGPUDevice::CachedBindGroup(const WebGPUPipeline& pipeline,
                                            WebGPUBuffer* const* buffers, size_t num_buffers,
                                            WGPUBuffer uniform, size_t uniform_bytes) {
  std::vector<uint64_t> key;
  key.reserve(num_buffers + 2);
  key.push_back(pipeline.serial);
  key.push_back(reinterpret_cast<uintptr_t>(uniform));  // cached uniforms are never freed
  for (size_t i = 0; i < num_buffers; ++i) key.push_back(buffers[i]->serial);
  auto it = bind_groups_.find(key);
  if (it != bind_groups_.end()) return it->second;
  if (bind_groups_.size() >= kMaxCachedBindGroups) {
    for (auto& entry : bind_groups_) f_.wgpuBindGroupRelease(entry.second);
    bind_groups_.clear();
  }
  WGPUBindGroup group = CreateBindGroup(pipeline, buffers, num_buffers, uniform, 0, uniform_bytes);
  bind_groups_.emplace(std::move(key), group);
  return group;
}

void WebGPUDevice::Dispatch(const std::string& kernel, const WebGPUPipeline& pipeline,
                            WebGPUBuffer* const* buffers, size_t num_buffers, const void* pod,
                            size_t pod_bytes, const uint32_t grid[3]) {
  for (size_t i = 0; i < num_buffers; ++i) {
    const WebGPUBuffer* b = buffers[i];
    if (b == nullptr) {
      ThrowError("TypeError",
                 "kernel '" + kernel + "': buffer argument " + std::to_string(i) + " is NULL");
    }
    if (b->device_id != device_id_) {
      ThrowError("ValueError", "kernel '" + kernel + "': buffer argument " + std::to_string(i) +
                                   " lives on webgpu(" + std::to_string(b->device_id) +
                                   "), the kernel runs on webgpu(" + std::to_string(device_id_) +
                                   ")");
    }
    if (b->size > limits_.maxStorageBufferBindingSize) {
      ThrowError("ValueError", "kernel '" + kernel + "': buffer argument " + std::to_string(i) +
                                   " has " + std::to_string(b->size) + " bytes, more than the " +
                                   std::to_string(limits_.maxStorageBufferBindingSize) +
                                   "-byte storage binding limit of '" + adapter_.name + "'");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  size_t uniform_bytes = AlignUp(std::max<size_t>(pod_bytes, 16), 16);
  WGPUBuffer cached =
      scalar_cache_ && pod_bytes <= kMaxCachedPodBytes ? CachedUniform(pod, pod_bytes) : nullptr;
  WGPUBindGroup group = nullptr;
  bool owned = cached == nullptr;
  if (cached != nullptr) {
    group = CachedBindGroup(pipeline, buffers, num_buffers, cached, uniform_bytes);
  } else {
    uint64_t offset = ReserveUniform(pod_bytes);
    std::memcpy(uniform_host_.data() + offset, pod, pod_bytes);
    group = CreateBindGroup(pipeline, buffers, num_buffers, uniform_buffer_, offset, uniform_bytes);
  }

  WGPUComputePassDescriptor pass_desc{};
  pass_desc.label = NullStringView();
  WGPUComputePassEncoder pass = f_.wgpuCommandEncoderBeginComputePass(Encoder(), &pass_desc);
  f_.wgpuComputePassEncoderSetPipeline(pass, pipeline.pipeline);
  f_.wgpuComputePassEncoderSetBindGroup(pass, 0, group, 0, nullptr);
  f_.wgpuComputePassEncoderDispatchWorkgroups(pass, grid[0], grid[1], grid[2]);
  f_.wgpuComputePassEncoderEnd(pass);
  f_.wgpuComputePassEncoderRelease(pass);
  if (owned) f_.wgpuBindGroupRelease(group);
  pending_dispatches_ += 1;
  counters_.dispatches += 1;
  bool failed;
  {
    std::lock_guard<std::mutex> error_lock(error_mu_);
    failed = !device_error_.empty();
  }
  if (failed) {
    // The encoder is unusable after a recording error: drop the batch so that later work runs.
    f_.wgpuCommandEncoderRelease(encoder_);
    encoder_ = nullptr;
    pending_dispatches_ = 0;
    uniform_used_ = 0;
    ThrowIfDeviceError("recording a kernel");
  }
}

}  // namespace webgpu
}  // namespace tvm_runtime
