/*
 * runtime.timer.vulkan: the device time between the timer's "start" and "stop", from two
 * timestamp queries written into the device's command stream (vkCmdWriteTimestamp at the bottom
 * of the pipe: each is written once everything recorded before it has finished), so the host's
 * launch time and its gaps between launches are not counted, and nothing waits for the queue
 * until "elapsed_ns".  The semantics of CUDA events: the span covers the work recorded between
 * start and stop, and idle time of the device inside it, if the batch was submitted in parts.
 *
 * A device whose compute queue has no timestamps (timestampValidBits 0) or a driver without the
 * query entry points is timed on the host between two waits for the stream instead.
 */
#ifndef TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_TIMER_H_
#define TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_TIMER_H_

namespace tvm_runtime {
namespace vulkan {

/* Registers runtime.timer.vulkan. */
void RegisterVulkanTimer();

}  // namespace vulkan
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_VULKAN_VULKAN_TIMER_H_
