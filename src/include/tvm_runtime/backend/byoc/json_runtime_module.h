/*
 * The base of an apache-tvm 0.27 JSON runtime module (dnnl_json, cublas_json, cudnn_json, ...):
 * everything but the execution engine.
 *
 * Serialized form (0.27's JSONRuntimeBase, tvm-0.27-abi.md 3.1 encodings):
 *   str symbol; str graph_json; vec<str> const_names
 * Functions, as 0.27 answers them:
 *   "get_symbol", "get_const_vars"      the symbol and the constant names
 *   "__init_<symbol>"(Array<Tensor>)     binds the constants, once; the const_loader calls it
 *                                        on the first lookup of <symbol>
 *   "<symbol>"(inputs..., outputs...)    runs the graph: the Relax VM calls it as a DPS packed
 *                                        function with the graph's inputs then its heads
 *
 * A runtime derives from JsonRuntimeModule, says which device its tensors live on, builds its
 * engine in OnInit (constants are bound by then) and runs in Execute, which receives the tensor
 * of every graph entry that has one (inputs, outputs, constants; nullptr for intermediates).
 * The base checks every tensor against the graph's shape and dtype before either is called, so
 * a wrong call is a ValueError, never a wild write.  Register the loader with
 * RegisterJsonRuntimeLoader<MyRuntime>("my_json").
 */
#ifndef TVM_RUNTIME_BACKEND_BYOC_JSON_RUNTIME_MODULE_H_
#define TVM_RUNTIME_BACKEND_BYOC_JSON_RUNTIME_MODULE_H_

#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/byoc/json_graph.h>
#include <tvm_runtime/backend/error.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace backend {
namespace json {

class JsonRuntimeModule : public ffi::ModuleObj {
 public:
  JsonRuntimeModule(std::string kind, std::string symbol, std::string graph_json,
                    std::vector<std::string> const_names)
      : kind_(std::move(kind)),
        symbol_(std::move(symbol)),
        graph_json_(std::move(graph_json)),
        const_names_(std::move(const_names)),
        where_(kind_ + " module '" + symbol_ + "'"),
        graph_(ParseJsonGraph(graph_json_, where_)) {
    std::vector<std::string> graph_consts;
    for (uint32_t nid : graph_.arg_nodes) {
      const Node& node = graph_.nodes[nid];
      if (node.op == "input") {
        for (uint32_t k = 0; k < node.num_outputs; ++k) input_entries_.push_back(Entry{nid, k});
      } else {
        const_nodes_.push_back(nid);
        graph_consts.push_back(node.name);
      }
    }
    // The const_loader hands constants over in const_names order, which 0.27 requires to be
    // the order of the const nodes in arg_nodes.
    if (graph_consts != const_names_) {
      GraphError(where_, "its const nodes (" + Join(graph_consts) +
                             ") do not match the module's constant names (" + Join(const_names_) +
                             ")");
    }
    for (uint32_t nid : const_nodes_) {
      if (graph_.nodes[nid].num_outputs != 1) GraphError(where_, "a const node has one output");
    }
  }

  const char* kind() const final { return kind_.c_str(); }
  int GetPropertyMask() const override {
    return ffi::Module::kBinarySerializable | ffi::Module::kRunnable;
  }
  ffi::String InspectSource(const ffi::String&) const override { return graph_json_; }

  ffi::Bytes SaveToBytes() const override {
    std::string out;
    PutString(&out, symbol_);
    PutString(&out, graph_json_);
    PutU64(&out, const_names_.size());
    for (const std::string& name : const_names_) PutString(&out, name);
    return ffi::Bytes(out);
  }

  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) override {
    // Each function keeps the module alive.
    ffi::Module self = ffi::GetRef<ffi::Module>(this);
    if (name == "get_symbol") {
      return ffi::Function::FromTyped([self, this]() { return ffi::String(symbol_); });
    }
    if (name == "get_const_vars") {
      return ffi::Function::FromTyped([self, this]() {
        ffi::Array<ffi::String> names;
        for (const std::string& n : const_names_) names.push_back(n);
        return names;
      });
    }
    if (name == "__init_" + symbol_) {
      return ffi::Function::FromTyped(
          [self, this](ffi::Array<ffi::Tensor> consts) { Initialize(consts); });
    }
    if (name == symbol_) {
      return ffi::Function::FromPacked(
          [self, this](ffi::PackedArgs args, ffi::Any*) { Invoke(args); });
    }
    return std::nullopt;
  }

  const Graph& graph() const { return graph_; }
  const std::string& symbol() const { return symbol_; }
  const std::string& where() const { return where_; }

 protected:
  /* The device every tensor of this runtime must be on (kDLCPU for DNNL). */
  virtual DLDeviceType device_type() const = 0;
  /* Builds the engine; the constants are in `entries` (by entry id), the rest is nullptr. */
  virtual void OnInit(const std::vector<const DLTensor*>& entries) = 0;
  /* Runs the graph on `entries`: inputs, outputs and constants bound, intermediates nullptr. */
  virtual void Execute(const std::vector<const DLTensor*>& entries) = 0;

 private:
  static void PutU64(std::string* out, uint64_t v) {
    out->append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  static void PutString(std::string* out, const std::string& s) {
    PutU64(out, s.size());
    out->append(s);
  }
  static std::string Join(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "'" : ", '") + s + "'";
    return out.empty() ? "none" : out;
  }

  /* Checks that `t` is what entry `e` of the graph declares; `what` names it in errors. */
  void CheckTensor(const DLTensor* t, const Entry& e, const std::string& what) const {
    const std::vector<int64_t>& shape = graph_.Shape(e);
    DLDataType dtype = graph_.DType(e);
    auto fail = [&](const std::string& why) {
      ThrowError("ValueError", what + " of " + where_ + " " + why);
    };
    if (t == nullptr || (t->data == nullptr && ffi::GetDataSize(*t) != 0)) fail("has no data");
    if (t->device.device_type != device_type()) {
      fail("is on device type " + std::to_string(t->device.device_type) + ", expected " +
           std::to_string(device_type()));
    }
    if (t->dtype.code != dtype.code || t->dtype.bits != dtype.bits ||
        t->dtype.lanes != dtype.lanes) {
      fail("has dtype " + DTypeText(t->dtype) + ", the graph says " + DTypeText(dtype));
    }
    bool same = t->ndim == static_cast<int>(shape.size());
    for (int i = 0; same && i < t->ndim; ++i) same = t->shape[i] == shape[i];
    if (!same)
      fail("has shape " + ShapeText(t->shape, t->ndim) + ", the graph says " +
           ShapeText(shape.data(), static_cast<int>(shape.size())));
    if (!ffi::IsContiguous(*t)) fail("is not contiguous");
  }
  static std::string DTypeText(DLDataType t) { return std::string(ffi::DLDataTypeToString(t)); }
  static std::string ShapeText(const int64_t* dims, int n) {
    std::string s = "(";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + ")";
  }

  void Initialize(const ffi::Array<ffi::Tensor>& consts) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (initialized_) return;
    if (consts.size() != const_nodes_.size()) {
      ThrowError("ValueError", "__init_" + symbol_ + " got " + std::to_string(consts.size()) +
                                   " constants, " + where_ + " needs " +
                                   std::to_string(const_nodes_.size()));
    }
    std::vector<const DLTensor*> entries(graph_.NumEntries(), nullptr);
    for (size_t i = 0; i < consts.size(); ++i) {
      Entry e{const_nodes_[i], 0};
      const DLTensor* t = consts[i].GetDLTensorPtr();
      CheckTensor(t, e, "constant '" + const_names_[i] + "'");
      entries[graph_.EntryId(e)] = t;
    }
    OnInit(entries);
    consts_ = consts;  // the engine may keep pointers into them
    const_entries_ = std::move(entries);
    initialized_ = true;
  }

  void Invoke(const ffi::PackedArgs& args) {
    if (!initialized_) {
      ThrowError("RuntimeError",
                 where_ + " was called before its constants were bound (__init_" + symbol_ +
                     "): call it through the artifact's const_loader, which binds them on "
                     "the first lookup");
    }
    size_t expected = input_entries_.size() + graph_.heads.size();
    if (static_cast<size_t>(args.size()) != expected) {
      ThrowError("TypeError", where_ + " takes " + std::to_string(input_entries_.size()) +
                                  " inputs and " + std::to_string(graph_.heads.size()) +
                                  " outputs, got " + std::to_string(args.size()) + " arguments");
    }
    std::vector<const DLTensor*> entries = const_entries_;
    for (size_t i = 0; i < expected; ++i) {
      bool is_input = i < input_entries_.size();
      const Entry& e = is_input ? input_entries_[i] : graph_.heads[i - input_entries_.size()];
      std::string what = "argument " + std::to_string(i) + (is_input ? " (input)" : " (output)");
      auto t = args[i].try_cast<DLTensor*>();
      if (!t.has_value()) ThrowError("TypeError", what + " of " + where_ + " is not a tensor");
      CheckTensor(*t, e, what);
      entries[graph_.EntryId(e)] = *t;
    }
    Execute(entries);
  }

  std::string kind_;
  std::string symbol_;
  std::string graph_json_;
  std::vector<std::string> const_names_;
  std::string where_;
  Graph graph_;
  std::vector<Entry> input_entries_;  // the function's inputs, in argument order
  std::vector<uint32_t> const_nodes_;
  std::vector<const DLTensor*> const_entries_;
  ffi::Array<ffi::Tensor> consts_;
  std::mutex mutex_;
  bool initialized_ = false;
};

/* Reads the serialized form; a malformed payload is a ValueError naming the kind. */
inline void ReadJsonRuntimePayload(const ffi::Bytes& bytes, const std::string& kind,
                                   std::string* symbol, std::string* graph_json,
                                   std::vector<std::string>* const_names) {
  BlobReader r(bytes.data(), bytes.size(), "'" + kind + "'");
  *symbol = r.ReadString();
  *graph_json = r.ReadString();
  *const_names = r.ReadStringVector();
  r.ExpectEnd();
}

/* Registers ffi.Module.load_from_bytes.<kind> for a runtime T constructible from
 * (symbol, graph_json, const_names). */
template <typename T>
void RegisterJsonRuntimeLoader(const std::string& kind) {
  ffi::Function::SetGlobal(
      "ffi.Module.load_from_bytes." + kind,
      ffi::Function::FromTyped([kind](const ffi::Bytes& bytes) {
        std::string symbol, graph_json;
        std::vector<std::string> const_names;
        ReadJsonRuntimePayload(bytes, kind, &symbol, &graph_json, &const_names);
        return ffi::Module(
            ffi::make_object<T>(std::move(symbol), std::move(graph_json), std::move(const_names)));
      }),
      /*override=*/true);
}

}  // namespace json
}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_BYOC_JSON_RUNTIME_MODULE_H_
