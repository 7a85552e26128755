/*
 * What the CUDA side's JSON runtimes (cublas_json, cudnn_json) share: the device their call's
 * tensors are on, a device buffer for vendor workspaces, per-thread vendor state, and the checks
 * of 0.27's one-kernel graphs.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_VENDOR_JSON_RUNTIME_H_
#define TVM_RUNTIME_BACKENDS_CUDA_VENDOR_JSON_RUNTIME_H_

#include <tvm_runtime/backend/byoc/json_graph.h>
#include <tvm_runtime/backend/error.h>

#include <map>
#include <memory>
#include <string>
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

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_VENDOR_JSON_RUNTIME_H_
