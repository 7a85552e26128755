/*
 * Fuzz target: an external-codegen module payload (`ffi.Module.load_from_bytes.<kind>`: the JSON
 * runtimes dnnl_json / cublas_json / cudnn_json, or the core's const_loader), compiled once per
 * kind with -DFUZZ_MODULE_KIND="dnnl_json" and -DFUZZ_BACKEND="dnnl" (the wheel serving it; none
 * for const_loader).  A payload that loads is serialized again and reloaded; a JSON runtime is then
 * initialized the way the const_loader does it, with small zero constants of the shapes its graph
 * declares, which runs the runtime's own checks and plan building (the vendor library is opened
 * there: where it is missing, that is a clear RuntimeError too).  Kernels are never launched.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/byoc/json_graph.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_runtime.h"

#ifndef FUZZ_MODULE_KIND
#error "compile with -DFUZZ_MODULE_KIND=\"dnnl_json\" (or cublas_json, cudnn_json, const_loader)"
#endif

namespace {

namespace ffi = ::tvm::ffi;
namespace json = ::tvm_runtime::backend::json;

ffi::Function load_module;
ffi::Function alloc_tensor;
// Constants bigger than this are not allocated (the input is then only loaded and reloaded):
// the graph may declare any shape, and the point is the runtime's checks, not big allocations.
constexpr int64_t kMaxConstantBytes = int64_t{1} << 20;

bool MakeConstants(const json::Graph& graph, ffi::Array<ffi::Tensor>* out) {
  for (uint32_t nid : graph.arg_nodes) {
    const json::Node& node = graph.nodes[nid];
    if (node.op != "const") continue;
    const std::vector<int64_t>& dims = node.shapes[0];
    DLDataType dtype = node.dtypes[0];
    int64_t bytes = (dtype.bits * dtype.lanes + 7) / 8;
    for (int64_t d : dims) {
      if (d < 0 || (d > 0 && bytes > kMaxConstantBytes / d)) return false;
      bytes *= d;
    }
    ffi::Shape shape(dims.begin(), dims.end());
    DLDevice cpu{kDLCPU, 0};
    out->push_back(
        alloc_tensor(shape, dtype, cpu, ffi::Optional<ffi::String>()).cast<ffi::Tensor>());
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
#ifdef FUZZ_BACKEND
  tvmrt_fuzz::LoadRuntime({FUZZ_BACKEND});
#else
  tvmrt_fuzz::LoadRuntime({});
#endif
  load_module = tvmrt_fuzz::Global("ffi.Module.load_from_bytes." FUZZ_MODULE_KIND);
  alloc_tensor = tvmrt_fuzz::Global("runtime.TVMTensorAllocWithScope");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tvmrt_fuzz::ExpectHandled([&] {
    ffi::Bytes payload(reinterpret_cast<const char*>(data), size);
    ffi::Module mod = load_module(payload).cast<ffi::Module>();
    mod = load_module(mod->SaveToBytes()).cast<ffi::Module>();
    auto get_symbol = mod->GetFunction("get_symbol");
    if (!get_symbol.has_value()) return;  // the const_loader: loading and saving is its surface
    std::string symbol = (*get_symbol)().cast<ffi::String>();
    // The graph loaded, so it parses: read its constants' shapes with the same parser.
    json::Graph graph = json::ParseJsonGraph(mod->InspectSource(""), "fuzz input");
    ffi::Array<ffi::Tensor> constants;
    if (!MakeConstants(graph, &constants)) return;
    auto init = mod->GetFunction("__init_" + symbol);
    if (init.has_value()) (*init)(constants);
  });
  return 0;
}
