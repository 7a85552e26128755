/*
 * runtime.timer.opencl: the device time of the commands (kernels, buffer copies) this backend
 * enqueues on a queue between the timer's "start" and "stop", summed from OpenCL event profiling
 * (CL_PROFILING_COMMAND_END - CL_PROFILING_COMMAND_START of each).  The core's VM profiler and
 * time evaluator use it instead of waiting for the queue around every call.
 *
 * The queues this backend creates have CL_QUEUE_PROFILING_ENABLE (measured on PoCL: about
 * 0.4 us more per launch of a trivial kernel, nothing once a kernel does real work).  An event
 * is asked of the driver only while a timer records: otherwise a launch pays one relaxed atomic
 * load.  A queue made elsewhere without profiling (Device.set_raw_stream), or an ICD loader
 * without the profiling entry points, is timed on the host between two clFinish instead.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_TIMER_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_TIMER_H_

#include <atomic>

#include "cl_api.h"

namespace tvm_runtime {
namespace opencl {

namespace detail {
extern std::atomic<int> live_recordings;
/* Hands `event` (a command just enqueued on `queue`) to the timers recording `queue`. */
void NoteCommand(cl_command_queue queue, cl_event event);
}  // namespace detail

/* The event of one command enqueued on `queue`: the enqueue asks the driver for one only while
 * a timer records.  Usage: CommandEvent ev(queue); enqueue(..., ev.slot()); check; ev.Done(). */
class CommandEvent {
 public:
  explicit CommandEvent(cl_command_queue queue)
      : queue_(queue), wanted_(detail::live_recordings.load(std::memory_order_relaxed) > 0) {}
  CommandEvent(const CommandEvent&) = delete;
  CommandEvent& operator=(const CommandEvent&) = delete;
  /* The enqueue's event argument. */
  cl_event* slot() { return wanted_ ? &event_ : nullptr; }
  /* After a successful enqueue: the command goes to the timers recording its queue. */
  void Done() {
    if (event_ != nullptr) detail::NoteCommand(queue_, event_);
    event_ = nullptr;
  }

 private:
  cl_command_queue queue_;
  bool wanted_;
  cl_event event_ = nullptr;
};

/* Registers runtime.timer.opencl. */
void RegisterOpenCLTimer();

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_TIMER_H_
