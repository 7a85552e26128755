/*
 * What the CUDA side's JSON runtimes (cublas_json, cudnn_json) share: the device their call's
 * tensors are on, a device buffer for vendor workspaces, per-thread vendor state, the checks of
 * 0.27's one-kernel graphs, and VendorJsonRuntime, the module skeleton both are written on.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_VENDOR_JSON_RUNTIME_H_
#define TVM_RUNTIME_BACKENDS_CUDA_VENDOR_JSON_RUNTIME_H_

#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_runtime/backend/byoc/json_graph.h>
#include <tvm_runtime/backend/byoc/json_runtime_module.h>
#include <tvm_runtime/backend/error.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_error.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

inline bool NameHas(const std::string& name, const char* part) {
  return name.find(part) != std::string::npos;
}

/* The first byte of a bound tensor. */
inline void* TensorData(const DLTensor* t) { return static_cast<char*>(t->data) + t->byte_offset; }

/* The device every bound tensor of a call is on, made current; a ValueError when they differ. */
inline int MakeCallDeviceCurrent(const std::vector<const DLTensor*>& entries,
                                 const std::string& where) {
  int device_id = -1;
  for (const DLTensor* t : entries) {
    if (t == nullptr) continue;
    if (device_id >= 0 && t->device.device_id != device_id) {
      backend::ThrowError("ValueError", "the tensors of " + where +
                                            " are on different CUDA devices (" +
                                            std::to_string(device_id) + " and " +
                                            std::to_string(t->device.device_id) + ")");
    }
    device_id = t->device.device_id;
  }
  CudaRuntime& rt = CudaRuntime::Global();
  rt.MakeCurrent(rt.Device(device_id < 0 ? 0 : device_id));
  return device_id < 0 ? 0 : device_id;
}

/* True when output 0 of node `nid` is an output of the graph: 0.27's cuBLAS and cuDNN runtimes
 * write each kernel straight into a bound output, so no kernel may feed another. */
inline bool IsGraphOutput(const backend::json::Graph& g, uint32_t nid) {
  for (const backend::json::Entry& h : g.heads) {
    if (h.node == nid && h.index == 0) return true;
  }
  return false;
}

/* One plan per kernel node of `g`, in graph order (`plan(nid)` checks the node and describes the
 * call); a graph without a kernel is an error. */
template <typename PlanOf>
auto PlanKernels(const backend::json::Graph& g, const std::string& where, PlanOf plan) {
  std::vector<decltype(plan(uint32_t{0}))> plans;
  for (size_t nid = 0; nid < g.nodes.size(); ++nid) {
    if (g.nodes[nid].op == "kernel") plans.push_back(plan(static_cast<uint32_t>(nid)));
  }
  if (plans.empty()) backend::ThrowError("RuntimeError", where + " has no kernel to run");
  return plans;
}

/* Device memory of one device, grown on demand and freed with the owner (errors at process exit,
 * when the driver may be gone, are ignored). */
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int device_id) : device_id_(device_id) {}
  ~DeviceBuffer() { Release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  /* At least `bytes` (the device's context must be current). */
  void* Reserve(size_t bytes, const char* what) {
    if (bytes > size_) {
      Release();
      CheckCu(CudaRuntime::Global().api().MemAlloc(&ptr_, bytes),
              "cuMemAlloc of " + std::to_string(bytes) + " bytes for " + what + " on CUDA device " +
                  std::to_string(device_id_));
      size_ = bytes;
    }
    return reinterpret_cast<void*>(ptr_);
  }
  size_t size() const { return size_; }

 private:
  void Release() {
    if (ptr_ == 0) return;
    CudaRuntime& rt = CudaRuntime::Global();
    ScopedContext scope(rt.api(), rt.Context(rt.Device(device_id_)));
    rt.api().MemFree(ptr_);
    ptr_ = 0;
    size_ = 0;
  }

  int device_id_;
  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
};

/* This thread's `State` (constructed from (api, device_id)) for a device: vendor handles and
 * workspaces are per thread, so concurrent calls on different streams never share one. */
template <typename State, typename Api>
State& ThreadState(const Api& api, int device_id) {
  thread_local std::map<int, std::unique_ptr<State>> states;
  std::unique_ptr<State>& slot = states[device_id];
  if (slot == nullptr) slot = std::make_unique<State>(api, device_id);
  return *slot;
}

/* A JSON runtime module that runs each kernel node of its graph with one vendor library: the
 * plans are made and the library opened at init (so a missing library or an unsupported node
 * fails at load, not at the first call), and each call runs on the current stream of its
 * tensors' device with this thread's vendor state.  Derived keeps only what is specific:
 *     static constexpr const char* kKind;      the module kind, e.g. "cublas_json"
 *     static const Api& OpenApi();             the library, opened on first use (throws)
 *     Plan MakePlan(uint32_t nid) const;       checks a kernel node and describes its call
 *     void Launch(const std::vector<const DLTensor*>& entries, State& state, void* stream);
 * and befriends this base, which calls them. */
template <typename Derived, typename Api, typename State, typename Plan>
class VendorJsonRuntime : public backend::json::JsonRuntimeModule {
 public:
  VendorJsonRuntime(std::string symbol, std::string graph_json, std::vector<std::string> consts)
      : JsonRuntimeModule(Derived::kKind, std::move(symbol), std::move(graph_json),
                          std::move(consts)) {}

 protected:
  DLDeviceType device_type() const final { return kDLCUDA; }

  void OnInit(const std::vector<const DLTensor*>&) final {
    auto plans =
        PlanKernels(graph(), where(), [this](uint32_t nid) { return self().MakePlan(nid); });
    api_ = &Derived::OpenApi();
    plans_ = std::move(plans);
  }

  void Execute(const std::vector<const DLTensor*>& entries) final {
    int device_id = MakeCallDeviceCurrent(entries, where());
    State& state = ThreadState<State>(*api_, device_id);
    self().Launch(entries, state, TVMFFIEnvGetStream(kDLCUDA, device_id));
  }

  [[noreturn]] void Unsupported(const backend::json::Node& node, const std::string& why) const {
    backend::ThrowError("RuntimeError", "tvm-runtime-cuda cannot run " + node.where + ": " + why);
  }

  /* Valid after init. */
  const Api& vendor() const { return *api_; }
  const std::vector<Plan>& plans() const { return plans_; }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }

  const Api* api_ = nullptr;
  std::vector<Plan> plans_;
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_VENDOR_JSON_RUNTIME_H_
