/*
 * CUDA events for Python (tvm.backend.cuda.Event) and the time evaluator (runtime.timer.cuda):
 * GPU-side timing of work on a stream, which host timers cannot measure without synchronising
 * around every launch.  The globals themselves are the shared ones of backend/gpu_events.h.
 */
#include <tvm_runtime/backend/gpu_events.h>

#include <cstdint>

#include "cuda_error.h"
#include "cuda_globals.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

namespace {

CUevent AsEvent(int64_t handle) { return reinterpret_cast<CUevent>(static_cast<intptr_t>(handle)); }

struct CudaEventOps {
  static constexpr int32_t kDeviceType = kDeviceTypeCUDA;
  static constexpr const char* kName = "cuda";

  static int64_t Create(int32_t device_id, bool timing) {
    CudaRuntime& rt = CudaRuntime::Global();
    rt.MakeCurrent(rt.Device(device_id));
    CUevent event = nullptr;
    CheckCu(rt.api().EventCreate(&event, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
            "cuEventCreate");
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(event));
  }

  static void Record(int64_t event, int32_t device_id, void* stream) {
    CudaRuntime& rt = CudaRuntime::Global();
    rt.MakeCurrent(rt.Device(device_id));
    CheckCu(rt.api().EventRecord(AsEvent(event), static_cast<CUstream>(stream)), "cuEventRecord");
  }

  static void Synchronize(int64_t event) {
    CheckCu(CudaRuntime::Global().api().EventSynchronize(AsEvent(event)), "cuEventSynchronize");
  }

  static double ElapsedMs(int64_t start, int64_t end) {
    const CuApi& api = CudaRuntime::Global().api();
    CheckCu(api.EventSynchronize(AsEvent(end)), "cuEventSynchronize");
    float ms = 0;
    CheckCu(api.EventElapsedTime(&ms, AsEvent(start), AsEvent(end)), "cuEventElapsedTime");
    return ms;
  }

  static void Destroy(int64_t event) {
    CheckCu(CudaRuntime::Global().api().EventDestroy(AsEvent(event)), "cuEventDestroy");
  }
};

}  // namespace

void RegisterEventGlobals() { backend::RegisterGpuEventGlobals<CudaEventOps>(); }

}  // namespace cuda
}  // namespace tvm_runtime
