/*
 * The process-wide state of a backend (its vendor API and the devices it found), as a CRTP base
 * with everything every backend's `<name>_runtime.h` used to repeat: the singleton, the lazy
 * discovery, and the queries that report availability without throwing.
 *
 *     class ClRuntime : public backend::VendorRuntime<ClRuntime, ClDevice> {
 *       friend class backend::VendorRuntime<ClRuntime, ClDevice>;
 *       ClRuntime() : VendorRuntime("OpenCL") {}
 *       std::string Discover(DeviceList* out);  // opens the driver; "" or why nothing is usable
 *      public:
 *       ClDevice& Device(int32_t id) { return Discovered(id); }
 *     };
 *
 * A backend keeps only what is specific: its device record, Discover(), and its own accessors.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_VENDOR_RUNTIME_H_
#define TVM_RUNTIME_BACKEND_GPU_VENDOR_RUNTIME_H_

#include <tvm_runtime/backend/gpu/lazy_devices.h>

#include <cstdint>
#include <string>
#include <utility>

namespace tvm_runtime {
namespace backend {

template <typename Derived, typename Found>
class VendorRuntime {
 public:
  using DeviceList = typename LazyDevices<Found>::List;

  /* The singleton.  Constructing it touches no driver, and it is never destroyed: memory,
   * modules and queues may still be released during interpreter shutdown, after this DSO's
   * static destructors ran. */
  static Derived& Global() {
    static Derived* rt = new Derived();
    return *rt;
  }

  /* Discovers on the first call.  Never throw: a machine without the driver is normal. */
  bool Available() { return NumDevices() > 0; }
  int NumDevices() {
    Init();
    return static_cast<int>(found_.size());
  }
  /* "" when at least one device is usable, otherwise what is missing and how to fix it. */
  const std::string& Status() {
    Init();
    return found_.status();
  }

 protected:
  /* `api` names the vendor API in messages, e.g. "CUDA". */
  explicit VendorRuntime(std::string api) : found_(std::move(api)) {}

  /* Runs Derived::Discover(DeviceList*) once; afterwards one acquire load. */
  void Init() {
    found_.EnsureDiscovered(
        [this](DeviceList* out) { return static_cast<Derived*>(this)->Discover(out); });
  }
  /* What discovery found for `device_id`, or a RuntimeError/ValueError that says why it cannot
   * be used.  Hot path. */
  Found& Discovered(int32_t device_id) {
    Init();
    return found_.Get(device_id);
  }

 private:
  LazyDevices<Found> found_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_VENDOR_RUNTIME_H_
