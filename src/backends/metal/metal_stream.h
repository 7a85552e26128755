/*
 * A Metal stream: one MTLCommandQueue and the command buffers committed to it that nobody has
 * waited for yet.  Every kernel launch and device-to-device copy is encoded into its own command
 * buffer and committed at once (a queue runs its command buffers in commit order, so work on one
 * stream stays ordered); Synchronize() waits for the last one and reports the first command
 * buffer that failed, with Metal's description of the failure.
 */
#ifndef TVM_RUNTIME_BACKENDS_METAL_METAL_STREAM_H_
#define TVM_RUNTIME_BACKENDS_METAL_METAL_STREAM_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "metal_messages.h"
#include "objc_api.h"

namespace tvm_runtime {
namespace metal {

/* apache-tvm's metal.GetProfileCounters keys, counted per stream. */
struct ProfileCounters {
  std::atomic<int64_t> dispatches{0};  // compute dispatches encoded
  std::atomic<int64_t> flushes{0};     // command buffers committed
  std::atomic<int64_t> syncs{0};       // host waits for the stream
  std::atomic<int64_t> blits{0};       // blit (device-to-device) copies encoded
  std::atomic<int64_t> gpu_to_cpu{0};
  std::atomic<int64_t> cpu_to_gpu{0};
  std::atomic<int64_t> gpu_to_gpu{0};
  std::atomic<int64_t> free_syncs{0};  // waits before freeing a buffer (none: see FreeData)
  void Reset();
};

class MetalStream {
 public:
  /* Takes ownership of `queue` (a +1 reference from newCommandQueue). */
  MetalStream(const ObjcApi& api, id queue) : api_(api), queue_(queue) {}
  /* Waits for pending work (errors are dropped: a destructor reports nothing) and releases the
   * queue. */
  ~MetalStream();
  MetalStream(const MetalStream&) = delete;
  MetalStream& operator=(const MetalStream&) = delete;

  /* Encodes `encode(id compute_encoder)` into a new command buffer and commits it. */
  template <typename Encode>
  void Compute(const char* what, Encode&& encode) {
    std::lock_guard<std::mutex> lock(mu_);
    AutoreleasePool pool(api_);
    id command_buffer = NewCommandBuffer(what);
    id encoder = msg::ComputeCommandEncoder(command_buffer);
    if (encoder == nullptr) ThrowNoEncoder(what);
    encode(encoder);
    msg::EndEncoding(encoder);
    counters.dispatches++;
    CommitAndTrack(command_buffer);
  }

  /* Encodes a buffer-to-buffer copy into a new command buffer and commits it. */
  void Blit(id source, uint64_t source_offset, id destination, uint64_t destination_offset,
            uint64_t size);

  /* Waits until everything committed so far has completed; throws RuntimeError with Metal's
   * message if a command buffer failed since the last Synchronize. */
  void Synchronize();

  ProfileCounters counters;

 private:
  id NewCommandBuffer(const char* what);
  [[noreturn]] void ThrowNoEncoder(const char* what);
  void CommitAndTrack(id command_buffer);
  /* Releases the completed command buffers at the front, remembering the first failure. */
  void ReapCompleted();
  void NoteFailure(id command_buffer);

  const ObjcApi& api_;
  id queue_;
  std::mutex mu_;
  std::deque<id> pending_;  // retained command buffers, oldest first
  std::string failure_;     // the first failure not yet reported
};

}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_METAL_STREAM_H_
