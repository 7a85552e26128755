#include "opencl_timer.h"

#include <tvm/ffi/device.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_timer.h>
#include <tvm_runtime/backend/gpu/numbered_devices.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cl_error.h"
#include "opencl_runtime.h"

namespace tvm_runtime {
namespace opencl {

namespace detail {
std::atomic<int> live_recordings{0};
}  // namespace detail

namespace {

// Events a recording holds before it waits for the older half and folds them into its sum, so
// a long time-evaluator round of tiny kernels keeps a bounded number of driver events alive.
constexpr size_t kFoldAt = 4096;

const ClApi& Api() { return OpenCLRuntime::Global().api(); }

bool QueueHasProfiling(const ClApi& cl, cl_command_queue queue) {
  if (cl.GetEventProfilingInfo == nullptr || cl.GetCommandQueueInfo == nullptr ||
      cl.RetainEvent == nullptr || cl.WaitForEvents == nullptr) {
    return false;
  }
  cl_command_queue_properties props = 0;
  if (cl.GetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(props), &props, nullptr) !=
      CL_SUCCESS) {
    return false;
  }
  return (props & CL_QUEUE_PROFILING_ENABLE) != 0;
}

/* The summed device time of `events` (waited for), which are released. */
int64_t DeviceTimeOf(const std::vector<cl_event>& events) {
  if (events.empty()) return 0;
  const ClApi& cl = Api();
  cl_int err = cl.WaitForEvents(static_cast<cl_uint>(events.size()), events.data());
  int64_t total = 0;
  for (cl_event e : events) {
    if (err == CL_SUCCESS) {
      cl_ulong start = 0, end = 0;
      err = cl.GetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
      if (err == CL_SUCCESS) {
        err = cl.GetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
      }
      if (err == CL_SUCCESS && end > start) total += static_cast<int64_t>(end - start);
    }
    cl.ReleaseEvent(e);
  }
  CheckCl(err, "runtime.timer.opencl: reading the commands' profiling times");
  return total;
}

/* The commands one timer records on one queue between its start and stop. */
struct Recording {
  cl_command_queue queue = nullptr;
  // Guarded by Recordings::mu_ while live.
  std::vector<cl_event> events;
  int64_t folded_ns = 0;  // the device time of the events already waited for and released
  bool live = false;
};

/* Every live recording; launches look here only while detail::live_recordings > 0. */
class Recordings {
 public:
  void Add(Recording* r) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.push_back(r);
    r->live = true;
    detail::live_recordings.fetch_add(1, std::memory_order_relaxed);
  }
  /* Ends `r`'s recording; returns the events it holds. */
  std::vector<cl_event> Remove(Recording* r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r->live) {
      live_.erase(std::find(live_.begin(), live_.end(), r));
      r->live = false;
      detail::live_recordings.fetch_sub(1, std::memory_order_relaxed);
    }
    return std::move(r->events);
  }
  /* Gives `event` to every recording of `queue`. */
  void Note(cl_command_queue queue, cl_event event) {
    const ClApi& cl = Api();
    std::lock_guard<std::mutex> lock(mu_);
    for (Recording* r : live_) {
      if (r->queue != queue) continue;
      cl.RetainEvent(event);
      r->events.push_back(event);
      if (r->events.size() >= kFoldAt) {
        // The device is still busy with the newer half: this wait only bounds the run-ahead.
        std::vector<cl_event> older(r->events.begin(), r->events.begin() + kFoldAt / 2);
        r->events.erase(r->events.begin(), r->events.begin() + kFoldAt / 2);
        r->folded_ns += DeviceTimeOf(older);
      }
    }
  }

 private:
  std::mutex mu_;
  std::vector<Recording*> live_;
};

Recordings& AllRecordings() {
  static auto* all = new Recordings();  // never destroyed: timers may outlive statics
  return *all;
}

/* One timer: event profiling on a queue that has it (and a loader with the entry points it
 * needs), else the host clock between two clFinish. */
class OpenCLSpan {
 public:
  explicit OpenCLSpan(int32_t device_id) : device_id_(device_id) {}
  OpenCLSpan(const OpenCLSpan&) = delete;
  OpenCLSpan& operator=(const OpenCLSpan&) = delete;
  ~OpenCLSpan() {
    // A destructor reports nothing: at worst the driver is already gone.
    try {
      for (cl_event e : AllRecordings().Remove(&recording_)) Api().ReleaseEvent(e);
    } catch (...) {  // NOLINT(bugprone-empty-catch)
    }
  }

  void Start() {
    for (cl_event e : AllRecordings().Remove(&recording_)) Api().ReleaseEvent(e);
    recording_.folded_ns = 0;
    const ClDevice& device = OpenCLRuntime::Global().Device(device_id_);
    recording_.queue = CurrentQueue(device_id_, device);
    host_timed_ = !QueueHasProfiling(Api(), recording_.queue);
    if (host_timed_) {
      CheckCl(Api().Finish(recording_.queue), "clFinish");
      host_start_ = Clock::now();
      return;
    }
    AllRecordings().Add(&recording_);
  }

  void Stop() {
    if (host_timed_) {
      CheckCl(Api().Finish(recording_.queue), "clFinish");
      host_ns_ =
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - host_start_).count();
      return;
    }
    stopped_ = AllRecordings().Remove(&recording_);
  }

  /* Waits for the recorded commands; 0 when none was enqueued. */
  int64_t ElapsedNs() {
    if (host_timed_) return host_ns_;
    std::vector<cl_event> events = std::move(stopped_);
    stopped_.clear();
    recording_.folded_ns += DeviceTimeOf(events);  // no longer live: no launch touches it
    return recording_.folded_ns;
  }

 private:
  using Clock = std::chrono::steady_clock;
  int32_t device_id_;
  Recording recording_;
  std::vector<cl_event> stopped_;  // the events of the last start..stop, read by ElapsedNs
  bool host_timed_ = false;
  Clock::time_point host_start_;
  int64_t host_ns_ = 0;
};

::tvm::ffi::Function MakeTimer(DLDevice dev) {
  backend::RequireDeviceType(dev, kDeviceTypeOpenCL, "OpenCL");
  OpenCLRuntime::Global().Device(dev.device_id);  // validates the id
  return backend::MakeDeviceTimer("opencl", std::make_shared<OpenCLSpan>(dev.device_id));
}

}  // namespace

namespace detail {

void NoteCommand(cl_command_queue queue, cl_event event) {
  try {
    AllRecordings().Note(queue, event);
  } catch (...) {
    Api().ReleaseEvent(event);
    throw;
  }
  Api().ReleaseEvent(event);
}

}  // namespace detail

void RegisterOpenCLTimer() { backend::SetGlobalFunction("runtime.timer.opencl", MakeTimer); }

}  // namespace opencl
}  // namespace tvm_runtime
