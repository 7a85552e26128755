#include "metal_stream.h"

#include <tvm_runtime/backend/error.h>

namespace tvm_runtime {
namespace metal {

namespace {

// MTLCommandBufferStatus values.
constexpr NSUInteger kStatusCompleted = 4;
constexpr NSUInteger kStatusError = 5;
// Command buffers kept without a wait before the completed ones are released.
constexpr size_t kReapThreshold = 256;

}  // namespace

void ProfileCounters::Reset() {
  for (std::atomic<int64_t>* c : {&dispatches, &flushes, &syncs, &blits, &gpu_to_cpu, &cpu_to_gpu,
                                  &gpu_to_gpu, &free_syncs}) {
    c->store(0);
  }
}

MetalStream::~MetalStream() {
  try {
    Synchronize();
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing can report it any more
  }
  msg::Release(queue_);
}

id MetalStream::NewCommandBuffer(const char* what) {
  id command_buffer = msg::CommandBuffer(queue_);
  if (command_buffer == nullptr) {
    backend::ThrowError("RuntimeError", std::string("Metal returned no command buffer for ") +
                                            what + "; the device may have been lost or removed");
  }
  return command_buffer;
}

void MetalStream::ThrowNoEncoder(const char* what) {
  backend::ThrowError("RuntimeError", std::string("Metal returned no command encoder for ") + what +
                                          "; the device may have been lost or removed");
}

void MetalStream::CommitAndTrack(id command_buffer) {
  msg::Commit(command_buffer);
  counters.flushes++;
  pending_.push_back(msg::Retain(command_buffer));  // outlives the autorelease pool
  if (pending_.size() > kReapThreshold) ReapCompleted();
}

void MetalStream::NoteFailure(id command_buffer) {
  if (!failure_.empty()) return;
  failure_ = msg::LocalizedDescription(msg::Error(command_buffer),
                                       "a Metal command buffer failed without an error");
}

void MetalStream::ReapCompleted() {
  AutoreleasePool pool(api_);
  while (!pending_.empty()) {
    NSUInteger status = msg::Status(pending_.front());
    if (status != kStatusCompleted && status != kStatusError) break;
    if (status == kStatusError) NoteFailure(pending_.front());
    msg::Release(pending_.front());
    pending_.pop_front();
  }
}

void MetalStream::Blit(id source, uint64_t source_offset, id destination,
                       uint64_t destination_offset, uint64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  AutoreleasePool pool(api_);
  id command_buffer = NewCommandBuffer("a device-to-device copy");
  id encoder = msg::BlitCommandEncoder(command_buffer);
  if (encoder == nullptr) ThrowNoEncoder("a device-to-device copy");
  msg::CopyFromBuffer(encoder, source, source_offset, destination, destination_offset, size);
  msg::EndEncoding(encoder);
  counters.blits++;
  CommitAndTrack(command_buffer);
}

void MetalStream::Synchronize() {
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counters.syncs++;
    AutoreleasePool pool(api_);
    // The queue completes command buffers in commit order: waiting for the last one waits for
    // all of them.
    if (!pending_.empty()) msg::WaitUntilCompleted(pending_.back());
    for (id command_buffer : pending_) {
      if (msg::Status(command_buffer) == kStatusError) NoteFailure(command_buffer);
      msg::Release(command_buffer);
    }
    pending_.clear();
    failure.swap(failure_);
  }
  if (!failure.empty()) {
    backend::ThrowError("RuntimeError",
                        "a Metal kernel or copy failed on the GPU: " + failure +
                            ". Kernels that read or write out of bounds, or run too long, end "
                            "like this; check the shapes passed to the failing function.");
  }
}

}  // namespace metal
}  // namespace tvm_runtime
