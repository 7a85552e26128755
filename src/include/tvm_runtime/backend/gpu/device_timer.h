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

#include <cstdint>
#include <memory>
#include <string>

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

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_DEVICE_TIMER_H_
