/*
 * HIP events for Python (tvm.backend.rocm.Event) and the time evaluator (runtime.timer.rocm):
 * GPU-side timing of work on a stream.  The globals are the shared ones of
 * backend/gpu_events.h, as for CUDA.
 */
#include <tvm_runtime/backend/gpu/gpu_events.h>

#include <cstdint>

#include "hip_error.h"
#include "rocm_globals.h"
#include "rocm_runtime.h"

namespace tvm_runtime {
namespace rocm {

namespace {

hipEvent_t AsEvent(int64_t handle) {
  return reinterpret_cast<hipEvent_t>(static_cast<intptr_t>(handle));
}

struct HipEventOps {
  static constexpr int32_t kDeviceType = kDeviceTypeROCM;
  static constexpr const char* kName = "rocm";

  static int64_t Create(int32_t device_id, bool timing) {
    RocmRuntime& rt = RocmRuntime::Global();
    rt.MakeCurrent(rt.Device(device_id));
    hipEvent_t event = nullptr;
    CheckHip(
        rt.api().EventCreateWithFlags(&event, timing ? hipEventDefault : hipEventDisableTiming),
        "hipEventCreateWithFlags");
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(event));
  }

  static void Record(int64_t event, int32_t device_id, void* stream) {
    RocmRuntime& rt = RocmRuntime::Global();
    rt.MakeCurrent(rt.Device(device_id));
    CheckHip(rt.api().EventRecord(AsEvent(event), static_cast<hipStream_t>(stream)),
             "hipEventRecord");
  }

  static void Synchronize(int64_t event) {
    CheckHip(RocmRuntime::Global().api().EventSynchronize(AsEvent(event)), "hipEventSynchronize");
  }

  static double ElapsedMs(int64_t start, int64_t end) {
    const HipApi& api = RocmRuntime::Global().api();
    CheckHip(api.EventSynchronize(AsEvent(end)), "hipEventSynchronize");
    float ms = 0;
    CheckHip(api.EventElapsedTime(&ms, AsEvent(start), AsEvent(end)), "hipEventElapsedTime");
    return ms;
  }

  static void Destroy(int64_t event) {
    CheckHip(RocmRuntime::Global().api().EventDestroy(AsEvent(event)), "hipEventDestroy");
  }
};

}  // namespace

void RegisterEventGlobals() { backend::RegisterGpuEventGlobals<HipEventOps>(); }

}  // namespace rocm
}  // namespace tvm_runtime
