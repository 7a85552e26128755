/*
 * Glue from a C++ device implementation (private to one DSO) to the C table of
 * tvm_runtime/c_api.h.  Each backend subclasses DeviceBackend, then hands
 * MakeDeviceAPITable(...) to TVMRuntimeRegisterDeviceAPI.  The trampolines catch every
 * exception, so no C++ exception ever leaves the backend DSO.
 */
#ifndef TVM_RUNTIME_BACKEND_DEVICE_API_TABLE_H_
#define TVM_RUNTIME_BACKEND_DEVICE_API_TABLE_H_

#include <tvm/ffi/any.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <string>

namespace tvm_runtime {
namespace backend {

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  virtual void SetDevice(int32_t device_id) = 0;
  /* Return None for attributes that make no sense for this device. */
  virtual ::tvm::ffi::Any GetAttr(int32_t device_id, int32_t kind) = 0;
  virtual void* AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment,
                          DLDataType type_hint) = 0;
  virtual void FreeData(int32_t device_id, void* data) = 0;
  virtual void CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                        uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, DLDataType type_hint,
                        void* stream) = 0;
  virtual void StreamSync(int32_t device_id, void* stream) = 0;

  /* Streams are optional: a backend that supports them overrides all four. */
  virtual bool SupportsStreams() const { return false; }
  virtual void* StreamCreate(int32_t device_id) { return nullptr; }
  virtual void StreamFree(int32_t device_id, void* stream) {}
  virtual void SyncStreamFromTo(int32_t device_id, void* src, void* dst) {
    StreamSync(device_id, src);
  }

  virtual ::tvm::ffi::Any GetTargetProperty(int32_t device_id, const std::string& key) {
    return ::tvm::ffi::Any();
  }
  /* "" when the driver is usable, otherwise what is missing and how to fix it. */
  virtual std::string DriverStatus() { return std::string(); }

  /* TVM_RUNTIME_DEVICE_* flags (c_api.h): TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC when the handles
   * AllocData returns are addresses that stay valid with an offset added. */
  virtual uint64_t DeviceFlags() const { return 0; }
};

/* The declarations of the entries every device table implements, for the body of a
 * DeviceBackend subclass that defines them in its .cc (one face for every backend's table):
 *     class MyDeviceAPI final : public backend::DeviceBackend {
 *      public:
 *       TVM_RUNTIME_DEVICE_BACKEND_OVERRIDES;
 *       TVM_RUNTIME_DEVICE_BACKEND_STREAM_OVERRIDES;  // when it has streams
 *       std::string DriverStatus() override;           // the optional entries, written out
 *     }; */
#define TVM_RUNTIME_DEVICE_BACKEND_OVERRIDES                         \
  void SetDevice(int32_t device_id) override;                        \
  ::tvm::ffi::Any GetAttr(int32_t device_id, int32_t kind) override; \
  TVM_RUNTIME_DEVICE_BACKEND_MEMORY_OVERRIDES

/* Memory, copies and sync: the part of the entries above that no base class can answer. */
#define TVM_RUNTIME_DEVICE_BACKEND_MEMORY_OVERRIDES                                             \
  void* AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment, DLDataType type_hint) \
      override;                                                                                 \
  void FreeData(int32_t device_id, void* data) override;                                        \
  void CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,           \
                uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, DLDataType type_hint,      \
                void* stream) override;                                                         \
  void StreamSync(int32_t device_id, void* stream) override

/* The four stream entries, all or none (see DeviceBackend). */
#define TVM_RUNTIME_DEVICE_BACKEND_STREAM_OVERRIDES          \
  bool SupportsStreams() const override { return true; }     \
  void* StreamCreate(int32_t device_id) override;            \
  void StreamFree(int32_t device_id, void* stream) override; \
  void SyncStreamFromTo(int32_t device_id, void* src, void* dst) override

namespace detail {

inline DeviceBackend* Self(void* self) { return static_cast<DeviceBackend*>(self); }

inline void WriteAny(::tvm::ffi::Any value, TVMFFIAny* out) {
  StoreOwnedAny(std::move(value), out);
}

}  // namespace detail

/* Builds the C table; `impl` and `name` must outlive the process (backends use a leaked
 * singleton and a string literal). */
inline TVMRuntimeDeviceAPI MakeDeviceAPITable(DeviceBackend* impl, int32_t device_type,
                                              const char* name) {
  TVMRuntimeDeviceAPI t{};
  t.struct_size = sizeof(TVMRuntimeDeviceAPI);
  t.abi_version = TVM_RUNTIME_ABI_VERSION;
  t.device_type = device_type;
  t.name = name;
  t.self = impl;
  t.set_device = [](void* self, int32_t dev) {
    return GuardCall([&] { detail::Self(self)->SetDevice(dev); });
  };
  t.get_attr = [](void* self, int32_t dev, int32_t kind, TVMFFIAny* out) {
    return GuardCall([&] { detail::WriteAny(detail::Self(self)->GetAttr(dev, kind), out); });
  };
  t.alloc_data = [](void* self, int32_t dev, uint64_t nbytes, uint64_t align, DLDataType hint,
                    void** out) {
    return GuardCall([&] { *out = detail::Self(self)->AllocData(dev, nbytes, align, hint); });
  };
  t.free_data = [](void* self, int32_t dev, void* data) {
    return GuardCall([&] { detail::Self(self)->FreeData(dev, data); });
  };
  t.copy_data = [](void* self, const void* from, uint64_t from_off, void* to, uint64_t to_off,
                   uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, DLDataType hint,
                   void* stream) {
    return GuardCall([&] {
      detail::Self(self)->CopyData(from, from_off, to, to_off, nbytes, dev_from, dev_to, hint,
                                   stream);
    });
  };
  t.stream_sync = [](void* self, int32_t dev, void* stream) {
    return GuardCall([&] { detail::Self(self)->StreamSync(dev, stream); });
  };
  if (impl->SupportsStreams()) {
    t.stream_create = [](void* self, int32_t dev, void** out) {
      return GuardCall([&] { *out = detail::Self(self)->StreamCreate(dev); });
    };
    t.stream_free = [](void* self, int32_t dev, void* stream) {
      return GuardCall([&] { detail::Self(self)->StreamFree(dev, stream); });
    };
    t.stream_sync_from_to = [](void* self, int32_t dev, void* src, void* dst) {
      return GuardCall([&] { detail::Self(self)->SyncStreamFromTo(dev, src, dst); });
    };
  }
  t.get_target_property = [](void* self, int32_t dev, const char* key, TVMFFIAny* out) {
    return GuardCall(
        [&] { detail::WriteAny(detail::Self(self)->GetTargetProperty(dev, key), out); });
  };
  t.driver_status = [](void* self, TVMFFIAny* out) {
    return GuardCall(
        [&] { detail::WriteAny(::tvm::ffi::String(detail::Self(self)->DriverStatus()), out); });
  };
  t.flags = impl->DeviceFlags();
  return t;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_DEVICE_API_TABLE_H_
