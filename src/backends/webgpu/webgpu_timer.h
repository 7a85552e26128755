/*
 * runtime.timer.webgpu: the device time between the timer's "start" and "stop", from two
 * timestamp queries written into the pending command encoder (wgpu-native's timestamps inside
 * encoders), so the host's launch time and its gaps between launches are not counted and
 * nothing waits for the queue until "elapsed_ns" resolves them.  As with CUDA events, the device's
 * idle time between two submits inside the span is counted.
 *
 * A device created without timestamps (the adapter lacks timestamp-query or wgpu-native's
 * TimestampQueryInsideEncoders, or TVM_WEBGPU_DISABLE_FEATURES=timestamp-query) is timed on the
 * host between two waits for the device instead.
 */
#ifndef TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_TIMER_H_
#define TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_TIMER_H_

namespace tvm_runtime {
namespace webgpu {

/* Registers runtime.timer.webgpu. */
void RegisterWebGPUTimer();

}  // namespace webgpu
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_WEBGPU_WEBGPU_TIMER_H_
