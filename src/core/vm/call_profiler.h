/*
 * The Relax VM's profiler: times every call instruction of one profiled run (the VM module's
 * `profile` method; Python's `vm.profile(...)`).  Off (the default) it costs nothing on the call
 * path: the interpreter takes its slow path only while a profiler or an instrument is set, a
 * branch it already took for instruments.
 *
 * Each call becomes one event: what ran (a kernel of the artifact, an allocation, a copy, another
 * builtin, or a nested VM function), on which device, its host time and its device time.  A call
 * whose tensors live on an accelerator is timed to completion.  Where the backend registers
 * `runtime.timer.<device>` (CUDA, ROCm events, OpenCL event profiling, Metal) the device time is
 * the timer's, which counts only the work enqueued between its start and stop, and reading it
 * waits for that work; elsewhere (Vulkan) the device is synchronised before the call (so earlier
 * queued work is not charged to it) and after it, and the device time is that host time.
 * Profiling therefore serialises the device: the events say where time goes, the profiled run's
 * total is not the unprofiled speed.
 */
#ifndef TVM_RUNTIME_CORE_VM_CALL_PROFILER_H_
#define TVM_RUNTIME_CORE_VM_CALL_PROFILER_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tvm_runtime {
namespace core {
namespace vm {

class CallProfiler {
 public:
  // Kept in step with tvm/runtime/profiling.py's _CATEGORIES.
  enum Category : int64_t { kKernel = 0, kAlloc = 1, kCopy = 2, kBuiltin = 3, kVMFunction = 4 };

  /* What a packed function's name says it is (builtins are named vm.builtin.*, runtime.*, ...;
   * the KV cache's attention builtins run the model's attention kernels and count as kernels). */
  static Category CategoryOfPacked(const std::string& name);

  /* Runs `call()` as the event of func_table entry `func_index`, attributed to the device of the
   * call's tensors (the first non-CPU one, else the CPU). */
  template <typename Call>
  void Record(int64_t func_index, Category category, const ::tvm::ffi::AnyView* args,
              int32_t num_args, Call&& call) {
    Event e;
    e.func_index = func_index;
    e.category = category;
    e.device = DeviceOf(args, num_args);
    e.depth = depth_;
    // Nested VM functions contain their own events: time them on the host only.
    bool timed_on_device = category != kVMFunction && e.device.device_type != kDLCPU;
    ::tvm::ffi::Optional<::tvm::ffi::Function> timer;
    if (timed_on_device) timer = TimerFor(e.device);
    if (timed_on_device && !timer.has_value()) Synchronize(e.device);
    e.start_ns = Now();
    if (timer.has_value()) (*timer)("start");
    ++depth_;
    try {
      call();
    } catch (...) {
      --depth_;
      throw;
    }
    --depth_;
    if (timer.has_value()) {
      (*timer)("stop");
      e.device_ns = (*timer)("elapsed_ns").cast<int64_t>();
    } else if (timed_on_device) {
      Synchronize(e.device);
    }
    e.wall_ns = Now() - e.start_ns;
    if (!timer.has_value()) e.device_ns = e.wall_ns;
    events_.push_back(e);
  }

  /* Nanoseconds since this profiler was made. */
  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
  }

  /* Waits for everything queued on `device`. */
  static void Synchronize(const DLDevice& device);

  /* [total_ns, names of func_table, events as Bytes of int64 records of kRecordFields]:
   * func_index, category, device_type, device_id, start_ns (from run_start_ns), wall_ns,
   * device_ns, depth. */
  ::tvm::ffi::Array<::tvm::ffi::Any> Report(int64_t run_start_ns, int64_t total_ns,
                                            const std::vector<std::string>& func_names) const;
  static constexpr int kRecordFields = 8;

 private:
  using Clock = std::chrono::steady_clock;
  struct Event {
    int64_t func_index = 0;
    Category category = kKernel;
    DLDevice device{kDLCPU, 0};
    int64_t start_ns = 0, wall_ns = 0, device_ns = 0;
    int64_t depth = 0;
  };

  static DLDevice DeviceOf(const ::tvm::ffi::AnyView* args, int32_t num_args);
  /* The backend's timer for one event on `device` (a fresh one: CUDA's timer owns two events);
   * none when the backend registers no runtime.timer.<device>. */
  ::tvm::ffi::Optional<::tvm::ffi::Function> TimerFor(const DLDevice& device);

  Clock::time_point origin_ = Clock::now();
  int64_t depth_ = 0;
  std::vector<Event> events_;
  // Per device type: the backend's timer factory, or none (looked up once per profiled run).
  std::unordered_map<int, ::tvm::ffi::Optional<::tvm::ffi::Function>> timer_factories_;
};

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_CALL_PROFILER_H_
