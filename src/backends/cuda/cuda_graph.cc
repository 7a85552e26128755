/*
 * CUDA graphs for the Relax VM: the builtins apache-tvm 0.27 emits when a model is compiled with
 * `relax.backend.use_cuda_graph` (its RewriteCUDAGraph pass).
 *
 *   vm.builtin.cuda_graph.get_cached_alloc(vm, alloc_func, index)
 *       runs alloc_func() once per VM and index and returns that same tuple of storages ever
 *       after, so the buffers a captured graph reads and writes never move.
 *   vm.builtin.cuda_graph.run_or_capture(vm, capture_func, args_tuple, index[, shape])
 *       the first time for (index, shape values): runs capture_func(*args) once as it is (so
 *       kernels get loaded and configured outside the capture), then again with its stream
 *       captured into a graph, which is instantiated and kept with what the function returned;
 *       every later time: launches that graph on the current stream and returns the kept value.
 *
 * The cache lives in the VM (backend/vm_extension.h), so graphs and the tensors they write are
 * released with it.  Capture happens on a stream of its own, made the thread's current CUDA
 * stream meanwhile (capturing the legacy default stream is not allowed); replays go to the
 * stream that is current when the VM calls.
 */
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/gpu/current_device.h>
#include <tvm_runtime/backend/vm_extension.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda_error.h"
#include "cuda_library.h"
#include "cuda_runtime.h"

namespace tvm_runtime {
namespace cuda {

namespace {

namespace ffi = ::tvm::ffi;

constexpr const char* kRunOrCapture = "vm.builtin.cuda_graph.run_or_capture";
constexpr const char* kGetCachedAlloc = "vm.builtin.cuda_graph.get_cached_alloc";

// A captured region is identified by the index the compiler gave it and, for regions that
// depend on symbolic shapes, the values of those shapes at capture time.
struct CaptureKey {
  int64_t index;
  std::vector<int64_t> shape;
  bool operator==(const CaptureKey& other) const {
    return index == other.index && shape == other.shape;
  }
};

struct CaptureKeyHash {
  size_t operator()(const CaptureKey& key) const {
    uint64_t h = std::hash<int64_t>()(key.index);
    for (int64_t v : key.shape) h = h * 1000003u ^ std::hash<int64_t>()(v);
    return static_cast<size_t>(h);
  }
};

/* The graph entry points, or a RuntimeError naming what the driver lacks. */
const CuApi& GraphApi() {
  CudaRuntime& rt = CudaRuntime::Global();
  rt.Device(backend::CurrentDevice<kDeviceTypeCUDA>());  // a clear error when there is no GPU
  const CuApi& api = rt.api();
  std::string missing;
  auto need = [&missing](const void* fn, const char* symbol) {
    if (fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  };
  need(reinterpret_cast<const void*>(api.StreamBeginCapture), "cuStreamBeginCapture_v2");
  need(reinterpret_cast<const void*>(api.StreamEndCapture), "cuStreamEndCapture");
  need(reinterpret_cast<const void*>(api.GraphInstantiateWithFlags), "cuGraphInstantiateWithFlags");
  need(reinterpret_cast<const void*>(api.GraphLaunch), "cuGraphLaunch");
  need(reinterpret_cast<const void*>(api.GraphExecDestroy), "cuGraphExecDestroy");
  need(reinterpret_cast<const void*>(api.GraphDestroy), "cuGraphDestroy");
  if (!missing.empty()) {
    backend::ThrowError(
        "RuntimeError",
        "this model was compiled with relax.backend.use_cuda_graph, but the CUDA driver (" +
            GetCudaLibrary().path + ") lacks " + missing +
            ": CUDA graphs need an NVIDIA driver for CUDA 11.4 or newer. Update the driver, or "
            "compile the model without relax.backend.use_cuda_graph");
  }
  return api;
}

/* What one VM keeps: its instantiated graphs with the values their capture returned, and the
 * storages of get_cached_alloc. */
class CudaGraphCacheObj : public ffi::Object {
 public:
  struct Captured {
    ffi::Any outputs;  // what capture_func returned: tensors in storages that never move
    CUgraphExec exec = nullptr;
  };

  CudaGraphCacheObj() = default;
  CudaGraphCacheObj(const CudaGraphCacheObj&) = delete;
  CudaGraphCacheObj& operator=(const CudaGraphCacheObj&) = delete;

  ~CudaGraphCacheObj() {
    if (graphs.empty()) return;  // then the driver may never have been loaded
    // Errors are ignored: at interpreter shutdown the driver may be gone already, and there is
    // no one to report to while the VM is released.
    const CuApi& api = CudaRuntime::Global().api();
    for (auto& entry : graphs) api.GraphExecDestroy(entry.second.exec);
  }

  std::unordered_map<CaptureKey, Captured, CaptureKeyHash> graphs;
  std::unordered_map<int64_t, ffi::Any> allocs;

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tvm_runtime.cuda.CudaGraphCache", CudaGraphCacheObj,
                                    ffi::Object);
};

CudaGraphCacheObj* CacheOf(const ffi::AnyView& vm_context) {
  return backend::GetOrCreateVMExtension<CudaGraphCacheObj>(vm_context, "cuda_graph", [] {
    return ffi::ObjectRef(ffi::make_object<CudaGraphCacheObj>());
  });
}

/* Calls a VM function (a closure of this VM) with the VM's own invoke_closure. */
ffi::Any InvokeVMFunction(const ffi::AnyView& vm_context, const ffi::AnyView& func,
                          const std::vector<ffi::AnyView>& args) {
  static const ffi::Function invoke = [] {
    auto f = ffi::Function::GetGlobal("vm.builtin.invoke_closure");
    if (!f.has_value()) {
      backend::ThrowError("RuntimeError",
                          "vm.builtin.invoke_closure is not registered: tvm-runtime is missing or "
                          "too old for tvm-runtime-cuda (pip install -U tvm-runtime)");
    }
    return *f;
  }();
  std::vector<ffi::AnyView> call;
  call.reserve(args.size() + 2);
  call.push_back(vm_context);
  call.push_back(func);
  call.insert(call.end(), args.begin(), args.end());
  ffi::Any rv;
  invoke.CallPacked(call.data(), static_cast<int32_t>(call.size()), &rv);
  return rv;
}

/* While alive: `stream` (a stream of our own) is the thread's current CUDA stream for the
 * device and is being captured into a graph.  Finish() ends the capture and returns the graph;
 * if the capture is abandoned (an exception), the destructor ends it, drops the partial graph
 * and restores the previous stream without throwing. */
class StreamCapture {
 public:
  StreamCapture(const CuApi& api, int32_t device_id) : api_(api), device_id_(device_id) {
    CheckCu(api_.StreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (TVMFFIEnvSetStream(kDeviceTypeCUDA, device_id_, stream_, &previous_) != 0) {
      api_.StreamDestroy(stream_);
      backend::ThrowError("RuntimeError", "could not make the capture stream current");
    }
    CUresult rc = api_.StreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL);
    if (rc != CUDA_SUCCESS) {
      Restore();
      ThrowCuError(rc, "cuStreamBeginCapture");
    }
    capturing_ = true;
  }

  CUgraph Finish() {
    CUgraph graph = nullptr;
    capturing_ = false;
    CUresult rc = api_.StreamEndCapture(stream_, &graph);
    Restore();
    if (rc != CUDA_SUCCESS) {
      if (graph != nullptr) api_.GraphDestroy(graph);
      ThrowCuError(rc,
                   "cuStreamEndCapture (a call in the captured region is not allowed in a "
                   "CUDA graph)");
    }
    return graph;
  }

  ~StreamCapture() {
    if (capturing_) {
      CUgraph partial = nullptr;
      if (api_.StreamEndCapture(stream_, &partial) == CUDA_SUCCESS && partial != nullptr) {
        api_.GraphDestroy(partial);
      }
    }
    if (stream_ != nullptr) Restore();
  }

  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;

 private:
  void Restore() {
    TVMFFIEnvSetStream(kDeviceTypeCUDA, device_id_, previous_, nullptr);
    api_.StreamDestroy(stream_);
    stream_ = nullptr;
  }

  const CuApi& api_;
  int32_t device_id_;
  CUstream stream_ = nullptr;
  TVMFFIStreamHandle previous_ = nullptr;
  bool capturing_ = false;
};

void RunOrCapture(ffi::PackedArgs args, ffi::Any* rv) {
  if (args.size() != 4 && args.size() != 5) {
    backend::ThrowError("TypeError", std::string(kRunOrCapture) +
                                         "(vm, capture_func, args_tuple, index[, shape]) takes "
                                         "4 or 5 arguments, got " +
                                         std::to_string(args.size()));
  }
  CaptureKey key{args[3].cast<int64_t>(), {}};
  if (args.size() == 5) {
    ffi::Shape shape = args[4].cast<ffi::Shape>();
    key.shape.assign(shape.begin(), shape.end());
  }
  CudaGraphCacheObj* cache = CacheOf(args[0]);
  const int32_t device_id = backend::CurrentDevice<kDeviceTypeCUDA>();
  CudaRuntime& rt = CudaRuntime::Global();

  auto found = cache->graphs.find(key);
  if (found != cache->graphs.end()) {
    rt.MakeCurrent(rt.Device(device_id));
    auto stream = static_cast<CUstream>(TVMFFIEnvGetStream(kDeviceTypeCUDA, device_id));
    CheckCu(rt.api().GraphLaunch(found->second.exec, stream), "cuGraphLaunch");
    *rv = found->second.outputs;
    return;
  }

  const CuApi& api = GraphApi();  // before running anything: fail early on an old driver
  ffi::Array<ffi::Any> tuple = args[2].cast<ffi::Array<ffi::Any>>();
  std::vector<ffi::AnyView> func_args(tuple.begin(), tuple.end());

  // As it is first: module loading, attribute setting and workspace allocation happen here,
  // where they are allowed, and its results are already what this call returns.
  InvokeVMFunction(args[0], args[1], func_args);

  rt.MakeCurrent(rt.Device(device_id));
  CudaGraphCacheObj::Captured captured;
  CUgraph graph = nullptr;
  {
    StreamCapture capture(api, device_id);
    captured.outputs = InvokeVMFunction(args[0], args[1], func_args);
    graph = capture.Finish();
  }
  CUresult rc = api.GraphInstantiateWithFlags(&captured.exec, graph, 0);
  api.GraphDestroy(graph);
  CheckCu(rc, "cuGraphInstantiate");
  *rv = captured.outputs;
  cache->graphs.emplace(std::move(key), std::move(captured));
}

void GetCachedAlloc(ffi::PackedArgs args, ffi::Any* rv) {
  if (args.size() != 3) {
    backend::ThrowError("TypeError", std::string(kGetCachedAlloc) +
                                         "(vm, alloc_func, index) takes 3 arguments, got " +
                                         std::to_string(args.size()));
  }
  int64_t index = args[2].cast<int64_t>();
  CudaGraphCacheObj* cache = CacheOf(args[0]);
  auto found = cache->allocs.find(index);
  if (found == cache->allocs.end()) {
    found = cache->allocs.emplace(index, InvokeVMFunction(args[0], args[1], {})).first;
  }
  *rv = found->second;
}

}  // namespace

void RegisterCudaGraphGlobals() {
  backend::SetGlobalPackedFunction(kRunOrCapture, RunOrCapture);
  backend::SetGlobalPackedFunction(kGetCachedAlloc, GetCachedAlloc);
}

}  // namespace cuda
}  // namespace tvm_runtime
