/*
 * The function a backend returns from `runtime.timer.<name>` (c_api.h 4a): called with "start",
 * "stop" and "elapsed_ns", the contract the core's time evaluator and VM profiler rely on.  A
 * backend supplies how it measures (a span type) and this header the dispatch on the action, so
 * every timer answers and fails the same way.
 *
 *   struct Span {
 *     void Start();
 *     void Stop();
 *     int64_t ElapsedNs();  // the device time between Start and Stop; waits for it
 *   };
 *   return MakeDeviceTimer("opencl", std::make_shared<Span>(...));
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_DEVICE_TIMER_H_
#define TVM_RUNTIME_BACKEND_GPU_DEVICE_TIMER_H_

#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace tvm_runtime {
namespace backend {

/* The timer owns `span`: it lives as long as the last copy of the returned function. */
template <typename Span>
::tvm::ffi::Function MakeDeviceTimer(const char* name, std::shared_ptr<Span> span) {
  return ::tvm::ffi::Function::FromTyped([name, span](const ::tvm::ffi::String& action) -> int64_t {
    if (action == "start") {
      span->Start();
      return 0;
    }
    if (action == "stop") {
      span->Stop();
      return 0;
    }
    if (action == "elapsed_ns") return span->ElapsedNs();
    ThrowError("ValueError", std::string("runtime.timer.") + name + ": unknown action '" +
                                 std::string(action) + "' (start, stop, elapsed_ns)");
  });
}

/* A span timed on the host between two waits for the device (`wait()`): for backends whose
 * device cannot report its own time, and the fallback of TimestampSpan. */
template <typename Wait>
class HostSyncedSpan {
 public:
  explicit HostSyncedSpan(Wait wait) : wait_(std::move(wait)) {}
  void Start() { start_ = Now(); }
  void Stop() { stop_ = Now(); }
  int64_t ElapsedNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(stop_ - start_).count();
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point Now() {
    wait_();
    return Clock::now();
  }
  Wait wait_;
  Clock::time_point start_, stop_;
};

/* A span measured by two timestamp queries that a backend writes into its command stream
 * (Vulkan, WebGPU), with what every such backend needs around them: a stop without a start
 * measures nothing, elapsed is 0 until a round is stopped and is kept once read (a later start
 * reuses the queries), and a device that cannot write timestamps is timed on the host between two
 * waits for it.  `Queries` is the backend's part:
 *
 *   struct Queries {
 *     bool available() const;      // the device writes timestamps
 *     void Write(uint32_t index);  // after the work recorded so far; 0 starts a round
 *     int64_t SpanNs();            // waits for both; timestamp 1 - timestamp 0 in ns
 *     void WaitForDevice();        // the host fallback's wait for all recorded work
 *   };
 */
template <typename Queries>
class TimestampSpan {
 public:
  explicit TimestampSpan(std::unique_ptr<Queries> queries)
      : queries_(std::move(queries)), host_(WaitForDevice{queries_.get()}) {}

  void Start() {
    if (!queries_->available()) {
      host_.Start();
      return;
    }
    queries_->Write(0);
    started_ = true;
    stopped_ = false;
  }

  void Stop() {
    if (!queries_->available()) {
      host_.Stop();
      return;
    }
    if (!started_) return;  // timestamp 0 of this round was never written
    queries_->Write(1);
    started_ = false;
    stopped_ = true;
    elapsed_ns_ = -1;
  }

  int64_t ElapsedNs() {
    if (!queries_->available()) return host_.ElapsedNs();
    if (!stopped_) return 0;
    if (elapsed_ns_ < 0) elapsed_ns_ = queries_->SpanNs();
    return elapsed_ns_;
  }

 private:
  struct WaitForDevice {
    Queries* queries;
    void operator()() const { queries->WaitForDevice(); }
  };

  std::unique_ptr<Queries> queries_;
  HostSyncedSpan<WaitForDevice> host_;
  bool started_ = false;  // a round started and not yet stopped
  bool stopped_ = false;  // a stopped round to read
  int64_t elapsed_ns_ = -1;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_DEVICE_TIMER_H_
