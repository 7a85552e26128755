/*
 * The graph of an apache-tvm 0.27 JSON runtime module (BYOC: dnnl_json, cublas_json,
 * cudnn_json, tensorrt, ...), as 0.27's Relax JSON serializer writes it
 * (src/relax/backend/contrib/codegen_json/codegen_json.h) and its JSONRuntimeBase reads it:
 *
 *   {"nodes": [{"op": "input"|"const"|"kernel", "name": str,
 *               "inputs": [[node, index, version], ...],          (kernel nodes only)
 *               "attrs": {"shape": [[dims...] per output], "dtype": ["float32", ...],
 *                         "num_inputs": n, "num_outputs": n, <op attributes>}}, ...],
 *    "arg_nodes": [leaf node ids], "heads": [[node, index, version], ...],
 *    "node_row_ptr": [0, ...]}         (entry id of output k of node i: node_row_ptr[i] + k)
 *
 * ParseJsonGraph checks everything a runtime indexes with (entry references, row pointers,
 * shapes and dtypes per output) so that code built on it never reads out of bounds: malformed
 * input is a ValueError that names the module and what is wrong.  Header-only, part of the SDK:
 * out-of-tree external runtimes use it as the in-tree ones do.  JSON is parsed by tvm-ffi
 * (`ffi.json.Parse`, reached through the C ABI like every cross-wheel call).
 */
#ifndef TVM_RUNTIME_BACKEND_BYOC_JSON_GRAPH_H_
#define TVM_RUNTIME_BACKEND_BYOC_JSON_GRAPH_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace backend {
namespace json {

namespace ffi = ::tvm::ffi;

/* One output of one node: (node id, output index). */
struct Entry {
  uint32_t node = 0;
  uint32_t index = 0;
};

/* Raised for anything malformed; `where` names the module ("dnnl_json module 'sym'"). */
[[noreturn]] inline void GraphError(const std::string& where, const std::string& why) {
  ThrowError("ValueError", "Invalid graph JSON in the " + where + ": " + why +
                               ". The artifact is corrupted or was not written by apache-tvm "
                               "0.27's external codegen; re-export it.");
}

class Node {
 public:
  std::string op;    // "input", "const" or "kernel"
  std::string name;  // parameter/constant name, or the operator/composite name of a kernel
  std::vector<Entry> inputs;
  uint32_t num_outputs = 1;
  std::vector<std::vector<int64_t>> shapes;  // one per output
  std::vector<DLDataType> dtypes;            // one per output
  ffi::Map<ffi::Any, ffi::Any> attrs;        // every attribute, as JSON values
  std::string where;                         // for error messages: "node 3 ('nn.relu') of ..."

  bool HasAttr(const std::string& key) const { return attrs.count(ffi::String(key)) != 0; }

  /* Typed attribute getters: a missing key returns `def`, a value of the wrong JSON type is a
   * ValueError naming the node and the key (a runtime never guesses at a mistyped graph). */
  int64_t IntAttr(const std::string& key, int64_t def) const {
    auto v = Find(key);
    if (!v.has_value()) return def;
    if (auto i = v->try_cast<int64_t>()) return *i;
    Mistyped(key, "an integer");
  }
  double FloatAttr(const std::string& key, double def) const {
    auto v = Find(key);
    if (!v.has_value()) return def;
    if (auto f = v->try_cast<double>()) return *f;
    Mistyped(key, "a number");
  }
  std::string StrAttr(const std::string& key, const std::string& def) const {
    auto v = Find(key);
    if (!v.has_value()) return def;
    if (auto s = v->try_cast<ffi::String>()) return std::string(*s);
    Mistyped(key, "a string");
  }
  std::vector<int64_t> IntsAttr(const std::string& key, std::vector<int64_t> def = {}) const {
    auto v = Find(key);
    if (!v.has_value()) return def;
    auto arr = v->try_cast<ffi::Array<ffi::Any>>();
    if (!arr.has_value()) Mistyped(key, "an array of integers");
    std::vector<int64_t> out;
    for (const ffi::Any& e : *arr) {
      auto i = e.try_cast<int64_t>();
      if (!i.has_value()) Mistyped(key, "an array of integers");
      out.push_back(*i);
    }
    return out;
  }

 private:
  std::optional<ffi::Any> Find(const std::string& key) const {
    auto it = attrs.find(ffi::String(key));
    if (it == attrs.end()) return std::nullopt;
    return (*it).second;
  }
  [[noreturn]] void Mistyped(const std::string& key, const char* expected) const {
    ThrowError("ValueError",
               "Invalid graph JSON: attribute '" + key + "' of " + where + " must be " + expected);
  }
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<uint32_t> arg_nodes;     // leaves: inputs and constants, in order
  std::vector<Entry> heads;            // the outputs of the graph
  std::vector<uint32_t> node_row_ptr;  // nodes.size() + 1 entries

  uint32_t EntryId(uint32_t node, uint32_t index) const { return node_row_ptr[node] + index; }
  uint32_t EntryId(const Entry& e) const { return EntryId(e.node, e.index); }
  uint32_t NumEntries() const { return node_row_ptr.empty() ? 0 : node_row_ptr.back(); }
  const std::vector<int64_t>& Shape(const Entry& e) const { return nodes[e.node].shapes[e.index]; }
  DLDataType DType(const Entry& e) const { return nodes[e.node].dtypes[e.index]; }
};

namespace detail {

inline ffi::Map<ffi::Any, ffi::Any> AsObject(const ffi::Any& v, const std::string& where,
                                             const std::string& what) {
  auto obj = v.try_cast<ffi::Map<ffi::Any, ffi::Any>>();
  if (!obj.has_value()) GraphError(where, what + " is not a JSON object");
  return *obj;
}

inline ffi::Array<ffi::Any> AsArray(const ffi::Any& v, const std::string& where,
                                    const std::string& what) {
  auto arr = v.try_cast<ffi::Array<ffi::Any>>();
  if (!arr.has_value()) GraphError(where, what + " is not a JSON array");
  return *arr;
}

inline int64_t AsInt(const ffi::Any& v, const std::string& where, const std::string& what) {
  // JSON booleans are not counts.
  if (v.type_index() != kTVMFFIInt) GraphError(where, what + " is not an integer");
  return v.cast<int64_t>();
}

inline uint32_t AsIndex(const ffi::Any& v, const std::string& where, const std::string& what) {
  int64_t i = AsInt(v, where, what);
  if (i < 0 || i > INT32_MAX)
    GraphError(where, what + " (" + std::to_string(i) + ") is out of range");
  return static_cast<uint32_t>(i);
}

inline std::string AsString(const ffi::Any& v, const std::string& where, const std::string& what) {
  auto s = v.try_cast<ffi::String>();
  if (!s.has_value()) GraphError(where, what + " is not a string");
  return std::string(*s);
}

inline Entry ParseEntry(const ffi::Any& v, const std::string& where, const std::string& what) {
  ffi::Array<ffi::Any> arr = AsArray(v, where, what);
  if (arr.size() < 2 || arr.size() > 3) {
    GraphError(where, what + " must be [node, index] or [node, index, version]");
  }
  return Entry{AsIndex(arr[0], where, what + " node"), AsIndex(arr[1], where, what + " index")};
}

inline DLDataType ParseDType(const std::string& text, const std::string& where) {
  DLDataType out{};
  TVMFFIByteArray bytes{text.data(), text.size()};
  if (TVMFFIDataTypeFromString(&bytes, &out) != 0) {
    TVMFFIObjectHandle err = nullptr;
    TVMFFIErrorMoveFromRaised(&err);
    if (err != nullptr) TVMFFIObjectDecRef(err);
    GraphError(where, "unknown dtype '" + text + "'");
  }
  return out;
}

inline void ParseAttrs(Node* node, const ffi::Any& value, const std::string& where) {
  for (const auto& kv : AsObject(value, where, node->where + " attrs")) {
    std::string key = AsString(kv.first, where, "an attribute key");
    const std::string what = node->where + " attribute '" + key + "'";
    if (key == "num_inputs") {
      AsIndex(kv.second, where, what);  // informative only: the inputs list is authoritative
    } else if (key == "num_outputs") {
      node->num_outputs = AsIndex(kv.second, where, what);
    } else if (key == "shape") {
      for (const ffi::Any& row : AsArray(kv.second, where, what)) {
        std::vector<int64_t> dims;
        for (const ffi::Any& d : AsArray(row, where, what)) {
          int64_t dim = AsInt(d, where, what);
          if (dim < 0) GraphError(where, what + " has a negative dimension");
          dims.push_back(dim);
        }
        node->shapes.push_back(std::move(dims));
      }
    } else if (key == "dtype") {
      for (const ffi::Any& t : AsArray(kv.second, where, what)) {
        node->dtypes.push_back(ParseDType(AsString(t, where, what), where));
      }
    }
    node->attrs.Set(ffi::String(key), kv.second);
  }
}

inline Node ParseNode(const ffi::Any& value, size_t id, const std::string& where) {
  Node node;
  node.where = "node " + std::to_string(id);
  ffi::Map<ffi::Any, ffi::Any> obj = AsObject(value, where, node.where);
  std::optional<ffi::Any> attrs;
  for (const auto& kv : obj) {
    std::string key = AsString(kv.first, where, node.where + " key");
    if (key == "op") {
      node.op = AsString(kv.second, where, node.where + " op");
    } else if (key == "name") {
      node.name = AsString(kv.second, where, node.where + " name");
    } else if (key == "inputs") {
      for (const ffi::Any& e : AsArray(kv.second, where, node.where + " inputs")) {
        node.inputs.push_back(ParseEntry(e, where, node.where + " input"));
      }
    } else if (key == "attrs" || key == "attr") {
      attrs = kv.second;
    } else {
      GraphError(where, node.where + " has an unknown key '" + key + "'");
    }
  }
  node.where = "node " + std::to_string(id) + " ('" + node.name + "') of the " + where;
  if (node.op != "input" && node.op != "const" && node.op != "kernel") {
    GraphError(where, "node " + std::to_string(id) + " has op '" + node.op +
                          "' (expected input, const or kernel)");
  }
  if (attrs.has_value()) ParseAttrs(&node, *attrs, where);
  // An input node of a tuple parameter has one output per field; the shape list says how many.
  if (node.op == "input" && !node.shapes.empty()) node.num_outputs = node.shapes.size();
  return node;
}

}  // namespace detail

/* Parses and checks a graph; `where` names the module in errors. */
inline Graph ParseJsonGraph(const std::string& text, const std::string& where) {
  std::optional<ffi::Function> parse = ffi::Function::GetGlobal("ffi.json.Parse");
  if (!parse.has_value()) ThrowError("RuntimeError", "tvm-ffi has no ffi.json.Parse");
  ffi::Any root;
  try {
    root = (*parse)(ffi::String(text));
  } catch (const ffi::Error& err) {
    GraphError(where, "not valid JSON (" + std::string(err.message()) + ")");
  }
  Graph g;
  bool has_nodes = false, has_row_ptr = false;
  for (const auto& kv : detail::AsObject(root, where, "the graph")) {
    std::string key = detail::AsString(kv.first, where, "a top-level key");
    if (key == "nodes") {
      has_nodes = true;
      ffi::Array<ffi::Any> arr = detail::AsArray(kv.second, where, "nodes");
      for (size_t i = 0; i < arr.size(); ++i)
        g.nodes.push_back(detail::ParseNode(arr[i], i, where));
    } else if (key == "arg_nodes") {
      for (const ffi::Any& v : detail::AsArray(kv.second, where, "arg_nodes")) {
        g.arg_nodes.push_back(detail::AsIndex(v, where, "an arg_nodes entry"));
      }
    } else if (key == "heads") {
      for (const ffi::Any& v : detail::AsArray(kv.second, where, "heads")) {
        g.heads.push_back(detail::ParseEntry(v, where, "a heads entry"));
      }
    } else if (key == "node_row_ptr") {
      has_row_ptr = true;
      for (const ffi::Any& v : detail::AsArray(kv.second, where, "node_row_ptr")) {
        g.node_row_ptr.push_back(detail::AsIndex(v, where, "a node_row_ptr entry"));
      }
    } else if (key != "symbol") {  // 0.27 tolerates (and ignores) "symbol"
      GraphError(where, "unknown top-level key '" + key + "'");
    }
  }
  if (!has_nodes || !has_row_ptr) GraphError(where, "\"nodes\" and \"node_row_ptr\" are required");
  // Every index a runtime follows is checked once here.
  if (g.node_row_ptr.size() != g.nodes.size() + 1 || g.node_row_ptr[0] != 0) {
    GraphError(where, "node_row_ptr must have one entry per node plus one, starting at 0");
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (g.node_row_ptr[i + 1] < g.node_row_ptr[i] ||
        g.node_row_ptr[i + 1] - g.node_row_ptr[i] != n.num_outputs) {
      GraphError(where, "node_row_ptr does not match the number of outputs of " + n.where);
    }
    if (n.shapes.size() != n.num_outputs || n.dtypes.size() != n.num_outputs) {
      GraphError(where, n.where + " needs one shape and one dtype per output");
    }
    if (n.op == "kernel" && n.inputs.empty()) GraphError(where, n.where + " has no inputs");
    if (n.op != "kernel" && !n.inputs.empty()) GraphError(where, n.where + " cannot have inputs");
    for (const Entry& e : n.inputs) {
      // Inputs refer to earlier nodes: the node list is in execution order.
      if (e.node >= i || e.index >= g.nodes[e.node].num_outputs) {
        GraphError(where, n.where + " reads an output that does not exist before it");
      }
    }
  }
  for (uint32_t id : g.arg_nodes) {
    if (id >= g.nodes.size() || g.nodes[id].op == "kernel") {
      GraphError(where, "arg_nodes must list input and const nodes");
    }
  }
  if (g.heads.empty()) GraphError(where, "the graph has no outputs (heads)");
  for (const Entry& e : g.heads) {
    if (e.node >= g.nodes.size() || e.index >= g.nodes[e.node].num_outputs) {
      GraphError(where, "a heads entry refers to an output that does not exist");
    }
  }
  return g;
}

}  // namespace json
}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_BYOC_JSON_GRAPH_H_
