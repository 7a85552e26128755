/*
 * CUDA events for Python (tvm.backend.cuda.Event) and the time evaluator (runtime.timer.cuda):
 * GPU-side timing of work on a stream, which host timers cannot measure without synchronising
 * around every launch.  The globals themselves are the shared ones of backend/gpu_events.h.
 */
#include <tvm_runtime/backend/gpu/gpu_events.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "cuda_error.h"
#include "cuda_globals.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

namespace {

CUevent AsEvent(int64_t handle) { return reinterpret_cast<CUevent>(static_cast<intptr_t>(handle)); }

/* The device of every live event.  An event belongs to the context it was created in, and the
 * driver wants that context current to wait on it, time it or destroy it; Python and the timer
 * may do that from any thread, with any (or no) context current. */
class EventDevices {
 public:
  void Add(int64_t event, int32_t device_id) {
    std::lock_guard<std::mutex> lock(mu_);
    devices_[event] = device_id;
  }
  void Remove(int64_t event) {
    std::lock_guard<std::mutex> lock(mu_);
    devices_.erase(event);
  }
  int32_t Of(int64_t event) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = devices_.find(event);
    if (it == devices_.end()) {
      backend::ThrowError("ValueError",
                          "not a live CUDA event (already destroyed, or not made "
                          "by tvm_runtime.cuda.event_create)");
    }
    return it->second;
  }

 private:
  std::mutex mu_;
  std::unordered_map<int64_t, int32_t> devices_;
};

EventDevices& Events() {
  static auto* events = new EventDevices();  // never destroyed: timers may outlive statics
  return *events;
}

/* Makes the event's context current for the lifetime of the guard (restoring the caller's). */
class EventContext {
 public:
  explicit EventContext(int64_t event)
      : device_(CudaRuntime::Global().Device(Events().Of(event))),
        scope_(CudaRuntime::Global().api(), CudaRuntime::Global().Context(device_)) {}

 private:
  CudaDevice& device_;
  ScopedContext scope_;
};

struct CudaEventOps {
  static constexpr int32_t kDeviceType = kDeviceTypeCUDA;
  static constexpr const char* kName = "cuda";

  static int64_t Create(int32_t device_id, bool timing) {
    CudaRuntime& rt = CudaRuntime::Global();
    rt.MakeCurrent(rt.Device(device_id));
    CUevent event = nullptr;
    CheckCu(rt.api().EventCreate(&event, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
            "cuEventCreate");
    auto handle = static_cast<int64_t>(reinterpret_cast<intptr_t>(event));
    Events().Add(handle, device_id);
    return handle;
  }

  static void Record(int64_t event, int32_t device_id, void* stream) {
    CudaRuntime& rt = CudaRuntime::Global();
    rt.MakeCurrent(rt.Device(device_id));
    CheckCu(rt.api().EventRecord(AsEvent(event), static_cast<CUstream>(stream)), "cuEventRecord");
  }

  static void Synchronize(int64_t event) {
    EventContext scope(event);
    CheckCu(CudaRuntime::Global().api().EventSynchronize(AsEvent(event)), "cuEventSynchronize");
  }

  static double ElapsedMs(int64_t start, int64_t end) {
    EventContext scope(end);
    const CuApi& api = CudaRuntime::Global().api();
    CheckCu(api.EventSynchronize(AsEvent(end)), "cuEventSynchronize");
    float ms = 0;
    CUresult rc = api.EventElapsedTime(&ms, AsEvent(start), AsEvent(end));
    if (rc == CUDA_ERROR_INVALID_HANDLE) {
      ThrowCuError(rc,
                   "cuEventElapsedTime (both events must be created with timing enabled, "
                   "belong to the same device and have been recorded)");
    }
    CheckCu(rc, "cuEventElapsedTime");
    return ms;
  }

  static void Destroy(int64_t event) {
    {
      EventContext scope(event);
      CheckCu(CudaRuntime::Global().api().EventDestroy(AsEvent(event)), "cuEventDestroy");
    }
    Events().Remove(event);
  }
};

}  // namespace

void RegisterEventGlobals() { backend::RegisterGpuEventGlobals<CudaEventOps>(); }

}  // namespace cuda
}  // namespace tvm_runtime
