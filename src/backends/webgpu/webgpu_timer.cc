#include "webgpu_timer.h"

#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_timer.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <cstdint>
#include <memory>

#include "webgpu_device.h"
#include "webgpu_runtime.h"

namespace tvm_runtime {
namespace webgpu {

namespace {

/* The two timestamp queries of one timer, in a query set of its own. */
class WebGPUQueries {
 public:
  explicit WebGPUQueries(WebGPUDevice* device) : device_(device) {
    if (device_->timestamps()) set_ = device_->CreateTimestamps();
  }
  WebGPUQueries(const WebGPUQueries&) = delete;
  WebGPUQueries& operator=(const WebGPUQueries&) = delete;
  ~WebGPUQueries() {
    // After the exit hook wgpu-native may be tearing down: leave the set to the process's end.
    if (set_ == nullptr || WebGPURuntime::Global().shut_down()) return;
    device_->ReleaseTimestamps(set_);
  }

  bool available() const { return set_ != nullptr; }
  void Write(uint32_t index) { device_->WriteTimestamp(set_, index); }
  int64_t SpanNs() { return device_->TimestampSpanNs(set_); }
  void WaitForDevice() { device_->Sync(); }

 private:
  WebGPUDevice* device_;
  WGPUQuerySet set_ = nullptr;
};

::tvm::ffi::Function MakeTimer(DLDevice dev) {
  backend::RequireDeviceType(dev, kDeviceTypeWebGPU, "WebGPU");
  WebGPUDevice& device = WebGPURuntime::Global().Device(dev.device_id);
  return backend::MakeDeviceTimer("webgpu", std::make_shared<backend::TimestampSpan<WebGPUQueries>>(
                                                std::make_unique<WebGPUQueries>(&device)));
}

}  // namespace

void RegisterWebGPUTimer() { backend::SetGlobalFunction("runtime.timer.webgpu", MakeTimer); }

}  // namespace webgpu
}  // namespace tvm_runtime
