/*
 * GPU events (CUDA, HIP, ...) as global functions: plain integer handles for Python, which
 * time work on a stream without synchronising around every launch, and the device timer the
 * core's time evaluator uses (`runtime.timer.<name>`, the contract in c_api.h 4a).
 *
 * A backend describes its events with a struct of static functions and registers them once:
 *
 *   struct Ops {
 *     static constexpr int32_t kDeviceType = ...;   // the streams' device type
 *     static constexpr const char* kName = "cuda";  // tvm_runtime.<kName>.event_*, runtime.timer.*
 *     static int64_t Create(int32_t device_id, bool timing);
 *     static void Record(int64_t event, int32_t device_id, void* stream);
 *     static void Synchronize(int64_t event);
 *     static double ElapsedMs(int64_t start, int64_t end);  // waits for `end`
 *     static void Destroy(int64_t event);
 *   };
 *   RegisterGpuEventGlobals<Ops>();
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_GPU_EVENTS_H_
#define TVM_RUNTIME_BACKEND_GPU_GPU_EVENTS_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/device_timer.h>

#include <cstdint>
#include <memory>
#include <string>

namespace tvm_runtime {
namespace backend {

/* A stream passed from Python: an int or an opaque pointer, or None for the device's current
 * stream (what the tvm-ffi stream context holds for this thread). */
inline void* StreamFromAny(int32_t device_type, int32_t device_id,
                           const ::tvm::ffi::AnyView& stream) {
  if (stream.type_index() == kTVMFFINone) return TVMFFIEnvGetStream(device_type, device_id);
  if (auto p = stream.as<void*>()) return *p;
  return reinterpret_cast<void*>(static_cast<intptr_t>(stream.cast<int64_t>()));
}

namespace detail {

/* The start/stop pair of one device timer, destroyed with the last copy of the timer: the
 * time evaluator's rounds measured on the GPU between two events on the device's current
 * stream, so the host's launch overhead between kernels is not counted. */
template <typename Ops>
struct TimerEvents {
  int32_t device_id = 0;
  int64_t start = 0;
  int64_t stop = 0;
  ~TimerEvents() {
    // A destructor reports nothing: at worst the driver is already gone.
    try {
      if (start != 0) Ops::Destroy(start);
      if (stop != 0) Ops::Destroy(stop);
    } catch (...) {  // NOLINT(bugprone-empty-catch)
    }
  }
  void Start() { Record(start); }
  void Stop() { Record(stop); }
  int64_t ElapsedNs() { return static_cast<int64_t>(Ops::ElapsedMs(start, stop) * 1e6); }

 private:
  void Record(int64_t event) {
    Ops::Record(event, device_id, TVMFFIEnvGetStream(Ops::kDeviceType, device_id));
  }
};

template <typename Ops>
::tvm::ffi::Function MakeEventTimer(DLDevice dev) {
  auto events = std::make_shared<TimerEvents<Ops>>();
  events->device_id = dev.device_id;
  events->start = Ops::Create(dev.device_id, /*timing=*/true);
  events->stop = Ops::Create(dev.device_id, /*timing=*/true);
  return MakeDeviceTimer(Ops::kName, events);
}

}  // namespace detail

/* tvm_runtime.<name>.event_{create,record,synchronize,elapsed_ms,destroy} and
 * runtime.timer.<name>. */
template <typename Ops>
void RegisterGpuEventGlobals() {
  auto name = [](const char* what) { return PrivateGlobalName(Ops::kName, what); };
  SetGlobalFunction(name("event_create"),
                    [](int32_t device_id, bool timing) { return Ops::Create(device_id, timing); });
  SetGlobalFunction(
      name("event_record"), [](int64_t event, int32_t device_id, ::tvm::ffi::AnyView stream) {
        Ops::Record(event, device_id, StreamFromAny(Ops::kDeviceType, device_id, stream));
      });
  SetGlobalFunction(name("event_synchronize"), [](int64_t event) { Ops::Synchronize(event); });
  SetGlobalFunction(name("event_elapsed_ms"),
                    [](int64_t start, int64_t end) { return Ops::ElapsedMs(start, end); });
  SetGlobalFunction(name("event_destroy"), [](int64_t event) {
    if (event != 0) Ops::Destroy(event);
  });
  SetGlobalFunction(std::string("runtime.timer.") + Ops::kName, detail::MakeEventTimer<Ops>);
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_GPU_EVENTS_H_
