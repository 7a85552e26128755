/*
 * dnnl_json: apache-tvm 0.27's DNNL JSON runtime modules, run with oneDNN 2.x on the CPU.
 *
 * The graph is what 0.27's DNNL codegen emits (composite kernels such as
 * "dnnl.conv2d_bias_relu", plus the single operators its runtime also accepts); the op name
 * selects the primitive and, as in 0.27, its suffixes the fused post-ops (_bias: input 2 is the
 * bias; _relu, _tanh, _sigmoid, _gelu, _swish, _clip: an eltwise post-op).  Supported here:
 *   conv2d family  (NCHW data, OIHW weights, groups, strides, dilation, padding)
 *   dense family   (x[N, I] . w[O, I]^T, i.e. nn.dense / inner product)
 *   nn.relu, nn.leaky_relu, tanh, sigmoid, exp, sqrt, abs, clip, gelu_erf
 *   add, multiply  (numpy broadcasting of one side)
 * in float32.  Anything else fails when the module is initialized, naming the node, so an
 * artifact never runs half-supported.  Tensors are bound in plain (row-major) layouts, which
 * oneDNN accepts directly: no reorders, at some cost in speed for convolutions.
 *
 * The engine is built once, when the const_loader binds the constants (__init_<symbol>);
 * oneDNN memory objects are then re-pointed at each call's tensors, so calls are serialized
 * per module.
 */
#include <tvm_runtime/backend/byoc/json_runtime_module.h>
#include <tvm_runtime/backend/error.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dnnl_library.h"

namespace tvm_runtime {
namespace dnnl_backend {
namespace {

using backend::json::Entry;
using backend::json::JsonRuntimeModule;
using backend::json::Node;

bool Contains(const std::string& s, const char* sub) { return s.find(sub) != std::string::npos; }

dnnl_format_tag_t PlainTag(size_t ndim) {
  static const dnnl_format_tag_t tags[] = {dnnl_a,    dnnl_ab,    dnnl_abc,
                                           dnnl_abcd, dnnl_abcde, dnnl_abcdef};
  return tags[ndim - 1];
}

struct Eltwise {
  dnnl_alg_kind_t alg;
  float alpha;
  float beta;
};

class DnnlJsonRuntime final : public JsonRuntimeModule {
 public:
  DnnlJsonRuntime(std::string symbol, std::string graph_json, std::vector<std::string> consts)
      : JsonRuntimeModule("dnnl_json", std::move(symbol), std::move(graph_json),
                          std::move(consts)) {}

  ~DnnlJsonRuntime() { Release(); }

 protected:
  DLDeviceType device_type() const final { return kDLCPU; }

  void OnInit(const std::vector<const DLTensor*>& entries) final {
    Release();  // a failed initialization is retried from scratch
    api_ = &Dnnl();
    CheckDnnl(api_->dnnl_engine_create(&engine_, dnnl_cpu, 0), "creating the CPU engine");
    CheckDnnl(api_->dnnl_stream_create(&stream_, engine_, dnnl_stream_default_flags),
              "creating a stream");
    const auto& g = graph();
    // Intermediates get buffers of their own, allocated once.
    scratch_.resize(g.NumEntries());
    for (size_t nid = 0; nid < g.nodes.size(); ++nid) {
      const Node& node = g.nodes[nid];
      if (node.op != "kernel") continue;
      for (uint32_t k = 0; k < node.num_outputs; ++k) {
        uint32_t eid = g.EntryId(nid, k);
        // The graph's shapes are untrusted: an overflowing size would make a small buffer
        // that oneDNN then writes past.
        size_t bytes = 4;
        for (int64_t d : node.shapes[k]) {
          if (d != 0 && bytes > (size_t{1} << 48) / static_cast<size_t>(d)) {
            Unsupported(node, "its output is implausibly large");
          }
          bytes *= static_cast<size_t>(d);
        }
        scratch_[eid].reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
        if (scratch_[eid] == nullptr) backend::ThrowError("RuntimeError", "out of host memory");
      }
    }
    for (size_t nid = 0; nid < g.nodes.size(); ++nid) {
      if (g.nodes[nid].op == "kernel") Build(static_cast<uint32_t>(nid));
    }
    (void)entries;  // constants are bound per call like every other entry
  }

  void Execute(const std::vector<const DLTensor*>& entries) final {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Step& step : steps_) {
      std::vector<dnnl_exec_arg_t> args;
      for (const Binding& b : step.args) {
        CheckDnnl(api_->dnnl_memory_set_data_handle(b.memory, Pointer(entries, b.eid)),
                  "binding a tensor of " + step.where);
        args.push_back(dnnl_exec_arg_t{b.arg, b.memory});
      }
      CheckDnnl(api_->dnnl_primitive_execute(step.primitive, stream_, static_cast<int>(args.size()),
                                             args.data()),
                "running " + step.where);
    }
    CheckDnnl(api_->dnnl_stream_wait(stream_), "waiting for " + where());
  }

 private:
  struct Binding {
    int arg;  // DNNL_ARG_*
    uint32_t eid;
    dnnl_memory_t memory;
  };
  struct Step {
    dnnl_primitive_t primitive = nullptr;
    std::vector<Binding> args;
    std::string where;
  };
  struct FreeDeleter {
    void operator()(char* p) const { std::free(p); }
  };

  void Release() {
    if (api_ == nullptr) return;
    for (Step& step : steps_) {
      for (auto& binding : step.args) api_->dnnl_memory_destroy(binding.memory);
      if (step.primitive != nullptr) api_->dnnl_primitive_destroy(step.primitive);
    }
    steps_.clear();
    if (stream_ != nullptr) api_->dnnl_stream_destroy(stream_);
    if (engine_ != nullptr) api_->dnnl_engine_destroy(engine_);
    stream_ = nullptr;
    engine_ = nullptr;
  }

  void* Pointer(const std::vector<const DLTensor*>& entries, uint32_t eid) const {
    if (const DLTensor* t = entries[eid]) return static_cast<char*>(t->data) + t->byte_offset;
    return scratch_[eid].get();
  }

  [[noreturn]] void Unsupported(const Node& node, const std::string& why) const {
    backend::ThrowError("RuntimeError", "tvm-runtime-dnnl cannot run " + node.where + ": " + why);
  }

  dnnl_memory_desc_t Desc(const Node& node, std::vector<int64_t> dims,
                          dnnl_format_tag_t tag) const {
    if (dims.empty()) dims.push_back(1);
    if (dims.size() > 6) Unsupported(node, "tensors of more than 6 dimensions");
    if (tag == dnnl_format_tag_undef) tag = PlainTag(dims.size());
    dnnl_memory_desc_t md;
    dnnl_dims_t d;
    for (size_t i = 0; i < dims.size(); ++i) d[i] = dims[i];
    CheckDnnl(
        api_->dnnl_memory_desc_init_by_tag(&md, static_cast<int>(dims.size()), d, dnnl_f32, tag),
        "describing a tensor of " + node.where);
    return md;
  }

  /* Creates the primitive for `op_desc` and records which entry feeds each argument. */
  void Submit(const Node& node, const void* op_desc, const dnnl_primitive_attr_t attr,
              const std::vector<std::pair<int, std::pair<uint32_t, dnnl_memory_desc_t>>>& args) {
    Step step;
    step.where = node.where;
    dnnl_primitive_desc_t pd = nullptr;
    CheckDnnl(api_->dnnl_primitive_desc_create(&pd, op_desc, attr, engine_, nullptr),
              "creating the primitive of " + node.where);
    dnnl_status_t st = api_->dnnl_primitive_create(&step.primitive, pd);
    api_->dnnl_primitive_desc_destroy(pd);
    CheckDnnl(st, "creating the primitive of " + node.where);
    steps_.push_back(std::move(step));
    Step& added = steps_.back();
    for (const auto& a : args) {
      dnnl_memory_t mem = nullptr;
      CheckDnnl(api_->dnnl_memory_create(&mem, &a.second.second, engine_, DNNL_MEMORY_NONE),
                "creating a memory of " + node.where);
      added.args.push_back(Binding{a.first, a.second.first, mem});
    }
  }

  /* Submits a convolution or inner product: data, weights, output and an optional bias, in
   * the node's input order, with the post-ops its name asks for. */
  void SubmitWeighted(uint32_t nid, const Node& node, const void* op_desc,
                      const dnnl_memory_desc_t& src, const dnnl_memory_desc_t& wgt,
                      const dnnl_memory_desc_t& dst, const dnnl_memory_desc_t* bias) {
    const auto& g = graph();
    auto attr = Attr(node, PostOps(node));
    std::vector<std::pair<int, std::pair<uint32_t, dnnl_memory_desc_t>>> args = {
        {DNNL_ARG_SRC, {g.EntryId(node.inputs[0]), src}},
        {DNNL_ARG_WEIGHTS, {g.EntryId(node.inputs[1]), wgt}},
        {DNNL_ARG_DST, {g.EntryId(nid, 0), dst}}};
    if (bias != nullptr) args.push_back({DNNL_ARG_BIAS, {g.EntryId(node.inputs[2]), *bias}});
    Submit(node, op_desc, attr.get(), args);
  }

  /* Post-ops named by the op's suffixes, as 0.27's DNNL runtime reads them. */
  std::vector<Eltwise> PostOps(const Node& node) const {
    const std::string& name = node.name;
    if (Contains(name, "_sum")) Unsupported(node, "the _sum post-op is not supported yet");
    for (const char* key : {"activation", "o_scl_idx", "dst_zp_idx", "sum_scl_idx"}) {
      if (node.HasAttr(key) &&
          !(std::string(key) == "activation" && node.StrAttr("activation", "none") == "none")) {
        Unsupported(
            node, std::string("quantized kernels (attribute '") + key + "') are not supported yet");
      }
    }
    std::vector<Eltwise> ops;
    if (Contains(name, "_relu")) ops.push_back({dnnl_eltwise_relu, 0.f, 0.f});
    if (Contains(name, "_tanh")) ops.push_back({dnnl_eltwise_tanh, 0.f, 0.f});
    if (Contains(name, "_clip")) {
      ops.push_back({dnnl_eltwise_clip, static_cast<float>(node.FloatAttr("a_min", 0.0)),
                     static_cast<float>(node.FloatAttr("a_max", 0.0))});
    }
    if (Contains(name, "_sigmoid")) ops.push_back({dnnl_eltwise_logistic, 0.f, 0.f});
    if (Contains(name, "_swish")) ops.push_back({dnnl_eltwise_swish, 1.f, 0.f});
    if (Contains(name, "_gelu")) ops.push_back({dnnl_eltwise_gelu_erf, 0.f, 0.f});
    if (Contains(name, "_mish")) Unsupported(node, "the _mish post-op is not supported yet");
    return ops;
  }

  /* A primitive_attr holding `ops` (owned by the caller through the returned guard). */
  std::shared_ptr<dnnl_primitive_attr> Attr(const Node& node, const std::vector<Eltwise>& ops) {
    dnnl_primitive_attr_t attr = nullptr;
    CheckDnnl(api_->dnnl_primitive_attr_create(&attr), "creating attributes of " + node.where);
    std::shared_ptr<dnnl_primitive_attr> guard(
        attr, [api = api_](dnnl_primitive_attr_t a) { api->dnnl_primitive_attr_destroy(a); });
    if (!ops.empty()) {
      dnnl_post_ops_t post = nullptr;
      CheckDnnl(api_->dnnl_post_ops_create(&post), "creating post-ops of " + node.where);
      for (const Eltwise& e : ops) {
        api_->dnnl_post_ops_append_eltwise(post, 1.f, e.alg, e.alpha, e.beta);
      }
      dnnl_status_t st = api_->dnnl_primitive_attr_set_post_ops(attr, post);
      api_->dnnl_post_ops_destroy(post);
      CheckDnnl(st, "setting post-ops of " + node.where);
    }
    return guard;
  }

  void CheckFloat32(const Node& node, uint32_t nid) const {
    const auto& g = graph();
    auto is_f32 = [](DLDataType t) { return t.code == kDLFloat && t.bits == 32 && t.lanes == 1; };
    for (const Entry& e : node.inputs) {
      if (!is_f32(g.DType(e))) Unsupported(node, "only float32 tensors are supported");
    }
    if (!is_f32(g.DType(Entry{nid, 0}))) Unsupported(node, "only float32 tensors are supported");
    if (node.num_outputs != 1) Unsupported(node, "kernels with several outputs");
  }

  void Build(uint32_t nid) {
    const Node& node = graph().nodes[nid];
    CheckFloat32(node, nid);
    const std::string& name = node.name;
    if (Contains(name, "conv1d") || Contains(name, "conv3d") || Contains(name, "transpose") ||
        Contains(name, "deconv")) {
      Unsupported(node, "only 2-D forward convolutions are supported yet");
    }
    if (Contains(name, "conv2d")) return Convolution(nid, node);
    if (Contains(name, "dense")) return Dense(nid, node);
    if (name == "add") return Binary(nid, node, dnnl_binary_add);
    if (name == "multiply") return Binary(nid, node, dnnl_binary_mul);
    static const std::map<std::string, dnnl_alg_kind_t> eltwise = {
        {"nn.relu", dnnl_eltwise_relu},      {"nn.leaky_relu", dnnl_eltwise_relu},
        {"tanh", dnnl_eltwise_tanh},         {"sigmoid", dnnl_eltwise_logistic},
        {"exp", dnnl_eltwise_exp},           {"sqrt", dnnl_eltwise_sqrt},
        {"abs", dnnl_eltwise_abs},           {"clip", dnnl_eltwise_clip},
        {"gelu_erf", dnnl_eltwise_gelu_erf},
    };
    auto it = eltwise.find(name);
    if (it == eltwise.end()) {
      Unsupported(node,
                  "operator '" + name +
                      "' is not supported yet (supported: conv2d and dense composites with "
                      "_bias/_relu/_tanh/_sigmoid/_gelu/_swish/_clip, nn.relu, nn.leaky_relu, "
                      "tanh, sigmoid, exp, sqrt, abs, clip, gelu_erf, add, multiply)");
    }
    float alpha = 0.f, beta = 0.f;
    if (name == "nn.leaky_relu") alpha = static_cast<float>(node.FloatAttr("alpha", 0.0));
    if (name == "clip") {
      alpha = static_cast<float>(node.FloatAttr("a_min", 0.0));
      beta = static_cast<float>(node.FloatAttr("a_max", 0.0));
    }
    if (node.inputs.size() != 1) Unsupported(node, "an eltwise operator takes one input");
    const auto& g = graph();
    dnnl_memory_desc_t src = Desc(node, g.Shape(node.inputs[0]), dnnl_format_tag_undef);
    dnnl_memory_desc_t dst = Desc(node, g.Shape(Entry{nid, 0}), dnnl_format_tag_undef);
    dnnl_eltwise_desc_t desc;
    CheckDnnl(api_->dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference, it->second, &src,
                                                   alpha, beta),
              "describing " + node.where);
    auto attr = Attr(node, {});
    Submit(node, &desc, attr.get(),
           {{DNNL_ARG_SRC, {g.EntryId(node.inputs[0]), src}},
            {DNNL_ARG_DST, {g.EntryId(nid, 0), dst}}});
  }

  void Convolution(uint32_t nid, const Node& node) {
    const auto& g = graph();
    bool has_bias = Contains(node.name, "_bias");
    if (node.inputs.size() != (has_bias ? 3u : 2u)) {
      Unsupported(node, has_bias ? "a conv2d with bias takes data, weight and bias"
                                 : "a conv2d takes data and weight");
    }
    std::string data_layout = node.StrAttr("data_layout", "NCHW");
    std::string kernel_layout = node.StrAttr("kernel_layout", "OIHW");
    std::string out_layout = node.StrAttr("out_layout", "");
    if (data_layout != "NCHW" || kernel_layout != "OIHW" ||
        !(out_layout.empty() || out_layout == "NCHW")) {
      Unsupported(node, "layouts " + data_layout + "/" + kernel_layout + "/" + out_layout +
                            " (only NCHW data with OIHW weights yet)");
    }
    const std::vector<int64_t>& x = g.Shape(node.inputs[0]);
    const std::vector<int64_t>& w = g.Shape(node.inputs[1]);
    const std::vector<int64_t>& y = g.Shape(Entry{nid, 0});
    if (x.size() != 4 || w.size() != 4 || y.size() != 4)
      Unsupported(node, "conv2d needs 4-D tensors");
    int64_t groups = node.IntAttr("groups", 1);
    std::vector<int64_t> strides = node.IntsAttr("strides", {1, 1});
    std::vector<int64_t> dilation = node.IntsAttr("dilation", {1, 1});
    std::vector<int64_t> padding = node.IntsAttr("padding", {0, 0, 0, 0});
    if (padding.size() == 2) padding = {padding[0], padding[1], padding[0], padding[1]};
    if (groups < 1 || w[0] % groups != 0 || strides.size() != 2 || dilation.size() != 2 ||
        padding.size() != 4) {
      Unsupported(node, "invalid groups, strides, dilation or padding attributes");
    }
    dnnl_memory_desc_t src = Desc(node, x, dnnl_nchw);
    dnnl_memory_desc_t dst = Desc(node, y, dnnl_nchw);
    dnnl_memory_desc_t wgt =
        groups == 1 ? Desc(node, w, dnnl_oihw)
                    : Desc(node, {groups, w[0] / groups, w[1], w[2], w[3]}, dnnl_goihw);
    dnnl_memory_desc_t bias;
    if (has_bias) bias = Desc(node, {w[0]}, dnnl_a);
    if (has_bias && Numel(g.Shape(node.inputs[2])) != w[0]) {
      Unsupported(node, "the bias must have one value per output channel");
    }
    dnnl_dims_t s{strides[0], strides[1]};
    dnnl_dims_t d{dilation[0] - 1, dilation[1] - 1};  // oneDNN counts dilation from 0
    dnnl_dims_t pl{padding[0], padding[1]};
    dnnl_dims_t pr{padding[2], padding[3]};
    dnnl_convolution_desc_t desc;
    CheckDnnl(api_->dnnl_dilated_convolution_forward_desc_init(
                  &desc, dnnl_forward_inference, dnnl_convolution_direct, &src, &wgt,
                  has_bias ? &bias : nullptr, &dst, s, d, pl, pr),
              "describing " + node.where);
    SubmitWeighted(nid, node, &desc, src, wgt, dst, has_bias ? &bias : nullptr);
  }

  void Dense(uint32_t nid, const Node& node) {
    const auto& g = graph();
    bool has_bias = Contains(node.name, "_bias");
    if (node.inputs.size() != (has_bias ? 3u : 2u)) {
      Unsupported(node, has_bias ? "a dense with bias takes data, weight and bias"
                                 : "a dense takes data and weight");
    }
    const std::vector<int64_t>& x = g.Shape(node.inputs[0]);
    const std::vector<int64_t>& w = g.Shape(node.inputs[1]);
    const std::vector<int64_t>& y = g.Shape(Entry{nid, 0});
    if (x.size() != 2 || w.size() != 2 || y.size() != 2 || x[1] != w[1] || y[0] != x[0] ||
        y[1] != w[0]) {
      Unsupported(node, "dense needs data [N, I], weight [O, I] and output [N, O]");
    }
    dnnl_memory_desc_t src = Desc(node, x, dnnl_nc);
    dnnl_memory_desc_t wgt = Desc(node, w, dnnl_oi);
    dnnl_memory_desc_t dst = Desc(node, y, dnnl_nc);
    dnnl_memory_desc_t bias;
    if (has_bias) {
      if (Numel(g.Shape(node.inputs[2])) != w[0]) {
        Unsupported(node, "the bias must have one value per output unit");
      }
      bias = Desc(node, {w[0]}, dnnl_a);
    }
    dnnl_inner_product_desc_t desc;
    CheckDnnl(api_->dnnl_inner_product_forward_desc_init(&desc, dnnl_forward_inference, &src, &wgt,
                                                         has_bias ? &bias : nullptr, &dst),
              "describing " + node.where);
    SubmitWeighted(nid, node, &desc, src, wgt, dst, has_bias ? &bias : nullptr);
  }

  /* add/multiply with numpy broadcasting; oneDNN broadcasts only its second source, so the
   * operands are swapped when the first one is the broadcast one (both ops commute). */
  void Binary(uint32_t nid, const Node& node, dnnl_alg_kind_t alg) {
    const auto& g = graph();
    if (node.inputs.size() != 2) Unsupported(node, "a binary operator takes two inputs");
    std::vector<int64_t> out = g.Shape(Entry{nid, 0});
    Entry lhs = node.inputs[0], rhs = node.inputs[1];
    auto aligned = [&](const Entry& e) {
      std::vector<int64_t> s = g.Shape(e);
      if (s.size() > out.size()) Unsupported(node, "an input has more dimensions than the output");
      s.insert(s.begin(), out.size() - s.size(), 1);
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != out[i] && s[i] != 1) Unsupported(node, "inputs do not broadcast to the output");
      }
      return s;
    };
    std::vector<int64_t> a = aligned(lhs), b = aligned(rhs);
    if (a != out) {
      std::swap(lhs, rhs);
      std::swap(a, b);
    }
    if (a != out) Unsupported(node, "both inputs are broadcast (oneDNN broadcasts only one)");
    dnnl_memory_desc_t src0 = Desc(node, a, dnnl_format_tag_undef);
    dnnl_memory_desc_t src1 = Desc(node, b, dnnl_format_tag_undef);
    dnnl_memory_desc_t dst = Desc(node, out, dnnl_format_tag_undef);
    dnnl_binary_desc_t desc;
    CheckDnnl(api_->dnnl_binary_desc_init(&desc, alg, &src0, &src1, &dst),
              "describing " + node.where);
    auto attr = Attr(node, {});
    Submit(node, &desc, attr.get(),
           {{DNNL_ARG_SRC_0, {g.EntryId(lhs), src0}},
            {DNNL_ARG_SRC_1, {g.EntryId(rhs), src1}},
            {DNNL_ARG_DST, {g.EntryId(nid, 0), dst}}});
  }

  static int64_t Numel(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }

  const DnnlApi* api_ = nullptr;
  dnnl_engine_t engine_ = nullptr;
  dnnl_stream_t stream_ = nullptr;
  std::vector<Step> steps_;
  std::vector<std::unique_ptr<char, FreeDeleter>> scratch_;
  std::mutex mutex_;
};

}  // namespace

void RegisterDnnlJsonRuntime() {
  backend::json::RegisterJsonRuntimeLoader<DnnlJsonRuntime>("dnnl_json");
}

}  // namespace dnnl_backend
}  // namespace tvm_runtime
