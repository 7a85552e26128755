/*
 * CUDA events as plain integer handles for Python: GPU-side timing of work on a stream, which
 * host timers cannot measure without synchronising around every launch.  The same events time
 * the rounds of the core's time evaluator (runtime.timer.cuda, the contract in c_api.h 4b).
 */
#include <tvm/ffi/any.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cuda_error.h"
#include "cuda_globals.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

namespace {

using ::tvm::ffi::AnyView;

CUevent AsEvent(int64_t handle) { return reinterpret_cast<CUevent>(static_cast<intptr_t>(handle)); }

// Streams travel through Python as ints or None (None: the current stream of the device).
CUstream AsStream(int32_t device_id, const AnyView& stream) {
  if (stream.type_index() == kTVMFFINone) {
    return static_cast<CUstream>(TVMFFIEnvGetStream(kDeviceTypeCUDA, device_id));
  }
  if (auto p = stream.as<void*>()) return static_cast<CUstream>(*p);
  return reinterpret_cast<CUstream>(static_cast<intptr_t>(stream.cast<int64_t>()));
}

int64_t EventCreate(int32_t device_id, bool timing) {
  CudaRuntime& rt = CudaRuntime::Global();
  rt.MakeCurrent(rt.Device(device_id));
  CUevent event = nullptr;
  CheckCu(rt.api().EventCreate(&event, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
          "cuEventCreate");
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(event));
}

void EventRecord(int64_t event, int32_t device_id, AnyView stream) {
  CudaRuntime& rt = CudaRuntime::Global();
  rt.MakeCurrent(rt.Device(device_id));
  CheckCu(rt.api().EventRecord(AsEvent(event), AsStream(device_id, stream)), "cuEventRecord");
}

void EventSynchronize(int64_t event) {
  CheckCu(CudaRuntime::Global().api().EventSynchronize(AsEvent(event)), "cuEventSynchronize");
}

double EventElapsedMs(int64_t start, int64_t end) {
  const CuApi& api = CudaRuntime::Global().api();
  CheckCu(api.EventSynchronize(AsEvent(end)), "cuEventSynchronize");
  float ms = 0;
  CheckCu(api.EventElapsedTime(&ms, AsEvent(start), AsEvent(end)), "cuEventElapsedTime");
  return ms;
}

void EventDestroy(int64_t event) {
  if (event == 0) return;
  CheckCu(CudaRuntime::Global().api().EventDestroy(AsEvent(event)), "cuEventDestroy");
}

/* The start/stop event pair of one device timer, destroyed with the last copy of the timer. */
struct TimerEvents {
  int32_t device_id = 0;
  int64_t start = 0;
  int64_t stop = 0;
  ~TimerEvents() {
    const CuApi& api = CudaRuntime::Global().api();
    if (start != 0) api.EventDestroy(AsEvent(start));  // a destructor reports nothing
    if (stop != 0) api.EventDestroy(AsEvent(stop));
  }
};

/* runtime.timer.cuda: the time evaluator's rounds measured on the GPU between two events on the
 * device's current stream, so the host's launch overhead between kernels is not counted. */
::tvm::ffi::Function MakeDeviceTimer(DLDevice dev) {
  auto events = std::make_shared<TimerEvents>();
  events->device_id = dev.device_id;
  events->start = EventCreate(dev.device_id, /*timing=*/true);
  events->stop = EventCreate(dev.device_id, /*timing=*/true);
  return ::tvm::ffi::Function::FromTyped([events](const ::tvm::ffi::String& action) -> int64_t {
    if (action == "start") {
      EventRecord(events->start, events->device_id, AnyView());
      return 0;
    }
    if (action == "stop") {
      EventRecord(events->stop, events->device_id, AnyView());
      return 0;
    }
    if (action == "elapsed_ns") {
      return static_cast<int64_t>(EventElapsedMs(events->start, events->stop) * 1e6);
    }
    backend::ThrowError("ValueError", "runtime.timer.cuda: unknown action '" + std::string(action) +
                                          "' (start, stop, elapsed_ns)");
  });
}

}  // namespace

void RegisterEventGlobals() {
  ::tvm::ffi::reflection::GlobalDef()
      .def("tvm_runtime.cuda.event_create", EventCreate)
      .def("tvm_runtime.cuda.event_record", EventRecord)
      .def("tvm_runtime.cuda.event_synchronize", EventSynchronize)
      .def("tvm_runtime.cuda.event_elapsed_ms", EventElapsedMs)
      .def("tvm_runtime.cuda.event_destroy", EventDestroy)
      .def("runtime.timer.cuda", MakeDeviceTimer);
}

}  // namespace cuda
}  // namespace tvm_runtime
