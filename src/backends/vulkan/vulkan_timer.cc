#include "vulkan_timer.h"

#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_timer.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>

#include "vk_error.h"
#include "vulkan_device.h"
#include "vulkan_runtime.h"

namespace tvm_runtime {
namespace vulkan {

namespace {

bool HasTimestamps(const VulkanDevice& d) {
  const VkDeviceFunctions& f = d.fns();
  return d.info().timestamp_valid_bits > 0 && d.info().props.limits.timestampPeriod > 0 &&
         f.CreateQueryPool != nullptr && f.DestroyQueryPool != nullptr &&
         f.GetQueryPoolResults != nullptr && f.CmdResetQueryPool != nullptr &&
         f.CmdWriteTimestamp != nullptr;
}

/* The two timestamp queries of one timer, in a pool of its own. */
class VulkanQueries {
 public:
  explicit VulkanQueries(VulkanDevice* device)
      : device_(device), available_(HasTimestamps(*device)) {
    if (!available_) return;
    VkQueryPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 2;
    CheckVk(device_->fns().CreateQueryPool(device_->handle(), &info, nullptr, &pool_),
            "vkCreateQueryPool");
  }
  VulkanQueries(const VulkanQueries&) = delete;
  VulkanQueries& operator=(const VulkanQueries&) = delete;
  ~VulkanQueries() {
    // After the exit hook the driver may be tearing down its own state (a timer collected late
    // in interpreter shutdown): leave the pool to the process's end, as kernels leave pipelines.
    if (pool_ == nullptr || VulkanRuntime::Global().shut_down()) return;
    // A batch still in flight may write into the pool: wait for it first.  A destructor reports
    // nothing: at worst the device is already gone.
    try {
      std::lock_guard<std::mutex> lock(device_->mutex());
      if (last_serial_ != 0) device_->stream().WaitFor(last_serial_);
      device_->fns().DestroyQueryPool(device_->handle(), pool_, nullptr);
    } catch (...) {  // NOLINT(bugprone-empty-catch)
    }
  }

  bool available() const { return available_; }

  /* Query `index` into the stream, at the bottom of the pipe (once the work recorded before it
   * has finished); a start first resets both. */
  void Write(uint32_t index) {
    std::lock_guard<std::mutex> lock(device_->mutex());
    CommandStream& stream = device_->stream();
    // A new round: the previous one's queries may still be pending in a batch in flight.
    if (index == 0 && last_serial_ != 0) stream.WaitFor(last_serial_);
    VkCommandBuffer cmd = stream.Record();
    if (index == 0) device_->fns().CmdResetQueryPool(cmd, pool_, 0, 2);
    device_->fns().CmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, index);
    last_serial_ = stream.recording_serial();
  }

  int64_t SpanNs() {
    uint64_t ticks[2] = {0, 0};
    {
      std::lock_guard<std::mutex> lock(device_->mutex());
      device_->stream().WaitFor(last_serial_);
      CheckVk(device_->fns().GetQueryPoolResults(device_->handle(), pool_, 0, 2, sizeof(ticks),
                                                 ticks, sizeof(uint64_t),
                                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults");
    }
    const uint32_t bits = device_->info().timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~0ULL : ((1ULL << bits) - 1);
    const uint64_t delta = ((ticks[1] & mask) - (ticks[0] & mask)) & mask;  // wraps in `bits`
    return static_cast<int64_t>(
        std::llround(static_cast<double>(delta) * device_->info().props.limits.timestampPeriod));
  }

  void WaitForDevice() { device_->Sync(); }

 private:
  VulkanDevice* device_;
  bool available_;
  VkQueryPool pool_ = nullptr;
  uint64_t last_serial_ = 0;  // the batch that last wrote into the pool
};

::tvm::ffi::Function MakeTimer(DLDevice dev) {
  backend::RequireDeviceType(dev, kDeviceTypeVulkan, "Vulkan");
  VulkanDevice& device = VulkanRuntime::Global().Device(dev.device_id);
  return backend::MakeDeviceTimer("vulkan", std::make_shared<backend::TimestampSpan<VulkanQueries>>(
                                                std::make_unique<VulkanQueries>(&device)));
}

}  // namespace

void RegisterVulkanTimer() { backend::SetGlobalFunction("runtime.timer.vulkan", MakeTimer); }

}  // namespace vulkan
}  // namespace tvm_runtime
