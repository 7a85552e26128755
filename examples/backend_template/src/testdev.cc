/*
 * Test-only backend: serves device type ext_dev (12) from host memory through the versioned C
 * table, so the test suite can exercise backend discovery, the ABI check, registration failure
 * and device plumbing (alloc/copy/streams/workspaces) without a driver.
 */
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace {

using tvm_runtime::backend::ThrowError;

constexpr int kNumDevices = 2;
constexpr uint64_t kMagic = 0x7e57de7e57de7e57ULL;

// Every allocation carries a header so that freeing a foreign or stale pointer is detected.
struct Header {
  uint64_t magic;
  uint64_t nbytes;
  int32_t device_id;
  char pad[64 - 20];
};
static_assert(sizeof(Header) == 64, "keeps data 64-byte aligned");

Header* HeaderOf(void* data) { return reinterpret_cast<Header*>(static_cast<char*>(data) - 64); }

class TestDevice final : public tvm_runtime::backend::DeviceBackend {
 public:
  void SetDevice(int32_t device_id) final { CheckId(device_id); }

  tvm::ffi::Any GetAttr(int32_t device_id, int32_t kind) final {
    if (kind == kTVMRuntimeAttrExist) return device_id >= 0 && device_id < kNumDevices ? 1 : 0;
    CheckId(device_id);
    switch (kind) {
      case kTVMRuntimeAttrMaxThreadsPerBlock:
        return 64;
      case kTVMRuntimeAttrWarpSize:
        return 1;
      case kTVMRuntimeAttrComputeVersion:
        return tvm::ffi::String("1.0");
      case kTVMRuntimeAttrDeviceName:
        return tvm::ffi::String("testdev" + std::to_string(device_id));
      case kTVMRuntimeAttrMaxThreadDimensions:
        return tvm::ffi::String("[64, 1, 1]");
      case kTVMRuntimeAttrTotalGlobalMemory:
        return static_cast<int64_t>(1) << 30;
      default:
        return tvm::ffi::Any();
    }
  }

  void* AllocData(int32_t device_id, uint64_t nbytes, uint64_t alignment, DLDataType) final {
    CheckId(device_id);
    if (alignment > 64) ThrowError("ValueError", "testdev supports alignment <= 64");
    void* raw = nullptr;
    if (posix_memalign(&raw, 64, 64 + nbytes) != 0) ThrowError("RuntimeError", "testdev: OOM");
    auto* h = static_cast<Header*>(raw);
    h->magic = kMagic;
    h->nbytes = nbytes;
    h->device_id = device_id;
    live_.fetch_add(1);
    return static_cast<char*>(raw) + 64;
  }

  void FreeData(int32_t device_id, void* data) final {
    Header* h = HeaderOf(data);
    if (h->magic != kMagic || h->device_id != device_id) {
      ThrowError("RuntimeError", "testdev: freeing a pointer it did not allocate");
    }
    h->magic = 0;
    live_.fetch_sub(1);
    std::free(h);
  }

  void CopyData(const void* from, uint64_t from_offset, void* to, uint64_t to_offset,
                uint64_t nbytes, DLDevice dev_from, DLDevice dev_to, DLDataType,
                void* stream) final {
    if (dev_from.device_type == kDLExtDev) CheckRange(from, from_offset, nbytes);
    if (dev_to.device_type == kDLExtDev) CheckRange(to, to_offset, nbytes);
    std::memcpy(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset,
                nbytes);
  }

  void StreamSync(int32_t device_id, void*) final { CheckId(device_id); }

  bool SupportsStreams() const final { return true; }
  void* StreamCreate(int32_t device_id) final {
    CheckId(device_id);
    return reinterpret_cast<void*>(static_cast<intptr_t>(next_stream_.fetch_add(1)));
  }
  void StreamFree(int32_t, void*) final {}

  // No TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC: CheckRange finds an allocation's header from its
  // handle, so the core must pass offsets in byte_offset instead of adding them to the pointer.
  // A device whose handles are plain addresses returns that flag (the CPU, CUDA and ROCm do).
  uint64_t DeviceFlags() const final { return 0; }

  tvm::ffi::Any GetTargetProperty(int32_t, const std::string& key) final {
    if (key == "supports_float16") return true;
    return tvm::ffi::Any();
  }

  int64_t live() const { return live_.load(); }

 private:
  static void CheckId(int32_t device_id) {
    if (device_id < 0 || device_id >= kNumDevices) {
      ThrowError("ValueError", "testdev has no device " + std::to_string(device_id));
    }
  }
  static void CheckRange(const void* data, uint64_t offset, uint64_t nbytes) {
    const Header* h = HeaderOf(const_cast<void*>(data));
    if (h->magic != kMagic) ThrowError("RuntimeError", "testdev: copy on a foreign pointer");
    if (offset + nbytes > h->nbytes) ThrowError("ValueError", "testdev: copy out of bounds");
  }

  std::atomic<int64_t> live_{0};
  std::atomic<int64_t> next_stream_{1};
};

TestDevice* Device() {
  static TestDevice* device = new TestDevice();
  return device;
}

void RegisterTestdev() {
#if defined(TESTDEV_MODE_register_fails)
  ThrowError("RuntimeError", "simulated driver initialisation failure");
#endif
  // The name is a literal: the core keeps the pointer for the life of the process.
  static TVMRuntimeDeviceAPI table =
      tvm_runtime::backend::MakeDeviceAPITable(Device(), kDLExtDev, "testdev");
  tvm_runtime::backend::RegisterDeviceAPI(table);
}

// Lambda for the barrier check: each round, every task writes its slot, waits at the barrier,
// then checks that all slots of the round are written before anyone starts the next round.
struct BarrierState {
  std::atomic<int> slots[64];
  int rounds;
  std::atomic<int> violations{0};
};

int BarrierLambda(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  auto* s = static_cast<BarrierState*>(cdata);
  for (int r = 1; r <= s->rounds; ++r) {
    s->slots[task_id].store(r);
    TVMBackendParallelBarrier(task_id, penv);
    for (int t = 0; t < penv->num_task; ++t) {
      if (s->slots[t].load() < r) s->violations.fetch_add(1);
    }
    TVMBackendParallelBarrier(task_id, penv);
  }
  return 0;
}

}  // namespace

#if defined(TESTDEV_MODE_abi_mismatch)
// Pretends to be built against a future core ABI major.
extern "C" TVM_RUNTIME_DLL uint32_t TVMRuntimeBackendABIVersion(void) { return 99u << 16; }
extern "C" TVM_RUNTIME_DLL int TVMRuntimeBackendRegister(char* err, size_t err_len) {
  return tvm_runtime::backend::RunRegistrationOnce([] { RegisterTestdev(); }, err, err_len);
}
#else
TVM_RUNTIME_DEFINE_BACKEND_ENTRY(RegisterTestdev)
#endif

extern "C" TVM_RUNTIME_DLL int TVMRuntimeBackendTestdevBarrierCheck(int num_task, int rounds) {
  BarrierState state;
  for (auto& s : state.slots) s.store(0);
  state.rounds = rounds;
  if (TVMBackendParallelLaunch(BarrierLambda, &state, num_task) != 0) return -1;
  return state.violations.load();
}
