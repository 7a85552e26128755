/*
 * cudnn_json: apache-tvm 0.27's cuDNN JSON runtime modules, run with cuDNN 9's convolution API.
 *
 * 0.27's cuDNN codegen (relax.ext.cudnn) writes one kernel node per module, named by the
 * composite it matched: cudnn.conv2d.nhwc_ohwi[_bias[_relu]] (the name keeps "nhwc_ohwi" for
 * both layouts it accepts: NHWC data with OHWI weights, and NCHW with OIHW), with relax
 * nn.conv2d's attributes (strides, padding, dilation, groups, data/kernel/out layout,
 * out_dtype).  As in 0.27: "bias" adds input 2 per output channel, "relu" applies ReLU, and the
 * bias forms run as cudnnConvolutionBiasActivationForward, the others as
 * cudnnConvolutionForward.  float32 and float16 (fp32 accumulation).
 *
 * Not supported yet: cudnn.attention.* (0.27 runs it through the cuDNN frontend's graph API,
 * only when built with it), and asymmetric padding (cuDNN's 2-D descriptor has one pad per
 * axis).  Either fails when the module is initialized, naming the node.
 *
 * Each thread keeps, per device, a cuDNN handle and a workspace that grows to what the chosen
 * algorithm needs.  The algorithm comes from cuDNN's heuristics (cudnnGetConvolutionForward-
 * Algorithm_v7), which never run kernels, so nothing is benchmarked behind the user's back.
 * Work goes to the current stream of the device.
 *
 * Numerics (tf32_policy.h): like 0.27, every convolution descriptor asks for
 * CUDNN_TENSOR_OP_MATH, so cuDNN may run float32 convolutions on TF32 tensor cores (Ampere and
 * newer); TVM_CUDA_ALLOW_TF32=0 asks for CUDNN_FMA_MATH on float32 instead.  Since cuDNN 7.4 a
 * kernel is chosen by algorithm *and* math type, and the heuristic reports each candidate's
 * math type (cudnnConvolutionFwdAlgoPerf_t.mathType): we take the first candidate whose math
 * type the policy allows and set that math type on the descriptor before running it, so what
 * runs is what the heuristic ranked.
 */
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_runtime/backend/byoc/json_runtime_module.h>
#include <tvm_runtime/backend/error.h>

#include <string>
#include <utility>
#include <vector>

#include "byoc/cudnn_library.h"
#include "byoc/tf32_policy.h"
#include "byoc/vendor_json_runtime.h"

namespace tvm_runtime {
namespace cuda {
namespace {

using backend::json::Entry;
using backend::json::Node;
namespace ffi = ::tvm::ffi;

/* A thread's cuDNN state on one device. */
class CudnnDeviceState {
 public:
  CudnnDeviceState(const CudnnApi& api, int device_id) : api_(api), workspace_(device_id) {
    CheckCudnn(api_.Create(&handle_), "cudnnCreate");
  }
  ~CudnnDeviceState() {
    if (handle_ != nullptr) api_.Destroy(handle_);
  }
  CudnnDeviceState(const CudnnDeviceState&) = delete;
  CudnnDeviceState& operator=(const CudnnDeviceState&) = delete;

  cudnnHandle_t handle() const { return handle_; }
  /* At least `bytes` of workspace; grows, never shrinks. */
  void* Workspace(size_t bytes) { return workspace_.Reserve(bytes, "the cuDNN workspace"); }

 private:
  const CudnnApi& api_;
  cudnnHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
};

/* What one conv2d node asks of cuDNN, derived once from the graph.  Sizes are N, C, H, W
 * whatever the memory layout (cuDNN's convention; `format` says how they are stored). */
struct ConvPlan {
  uint32_t x = 0, w = 0, bias = 0, out = 0;  // entry ids
  bool has_bias = false, relu = false;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
  cudnnMathType_t math = CUDNN_TENSOR_OP_MATH;  // asked of the heuristic (the policy)
  int n = 0, c = 0, h = 0, wd = 0, k = 0, kc = 0, r = 0, s = 0, oh = 0, ow = 0;
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, groups = 1;
  std::string where;
};

/* Destroys the descriptors of one call however it ends. */
struct CudnnDescriptors {
  const CudnnApi& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  ~CudnnDescriptors() {
    for (cudnnTensorDescriptor_t t : {x, y, bias}) {
      if (t != nullptr) api.DestroyTensorDescriptor(t);
    }
    if (w != nullptr) api.DestroyFilterDescriptor(w);
    if (conv != nullptr) api.DestroyConvolutionDescriptor(conv);
    if (act != nullptr) api.DestroyActivationDescriptor(act);
  }
};

class CudnnJsonRuntime final
    : public VendorJsonRuntime<CudnnJsonRuntime, CudnnApi, CudnnDeviceState, ConvPlan> {
 public:
  using VendorJsonRuntime::VendorJsonRuntime;
  static constexpr const char* kKind = "cudnn_json";

 private:
  friend class VendorJsonRuntime<CudnnJsonRuntime, CudnnApi, CudnnDeviceState, ConvPlan>;

  static const CudnnApi& OpenApi() { return Cudnn(); }

  void Launch(const std::vector<const DLTensor*>& entries, CudnnDeviceState& state, void* stream) {
    CheckCudnn(vendor().SetStream(state.handle(), static_cast<cudnnStream_t>(stream)),
               "cudnnSetStream for " + where());
    for (const ConvPlan& plan : plans()) Run(plan, entries, &state);
  }

  ConvPlan MakePlan(uint32_t nid) const {
    const auto& g = graph();
    const Node& node = g.nodes[nid];
    const std::string& name = node.name;
    ConvPlan p;
    p.where = node.where;
    if (NameHas(name, "attention")) {
      Unsupported(node, "cuDNN attention (" + name + ") is not supported yet");
    }
    if (name.rfind("cudnn.conv2d", 0) != 0) {
      Unsupported(node, "operator '" + name + "' is not a cuDNN composite (cudnn.conv2d...)");
    }
    if (node.num_outputs != 1) Unsupported(node, "kernels with several outputs");
    if (!IsGraphOutput(g, nid)) Unsupported(node, "its output is not an output of the module");
    p.has_bias = NameHas(name, "bias");
    p.relu = NameHas(name, "relu");
    if (p.relu && !p.has_bias) Unsupported(node, "ReLU without a bias has no cuDNN composite");
    if (node.inputs.size() != (p.has_bias ? 3u : 2u)) {
      Unsupported(node, p.has_bias ? "takes data, weight and bias" : "takes data and weight");
    }
    p.x = g.EntryId(node.inputs[0]);
    p.w = g.EntryId(node.inputs[1]);
    p.out = g.EntryId(nid, 0);
    if (p.has_bias) p.bias = g.EntryId(node.inputs[2]);

    std::string data_layout = node.StrAttr("data_layout", "NCHW");
    std::string kernel_layout = node.StrAttr("kernel_layout", "OIHW");
    std::string out_layout = node.StrAttr("out_layout", data_layout);
    bool nhwc = data_layout == "NHWC" && kernel_layout == "OHWI" && out_layout == "NHWC";
    bool nchw = data_layout == "NCHW" && kernel_layout == "OIHW" && out_layout == "NCHW";
    if (!nhwc && !nchw) {
      Unsupported(node, "layouts " + data_layout + "/" + kernel_layout + "/" + out_layout +
                            " (cuDNN runs NCHW/OIHW and NHWC/OHWI)");
    }
    p.format = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;

    DLDataType t = g.DType(node.inputs[0]);
    auto same = [](DLDataType a, DLDataType b) {
      return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
    };
    bool types_agree = same(t, g.DType(node.inputs[1])) && same(t, g.DType(Entry{nid, 0})) &&
                       (!p.has_bias || same(t, g.DType(node.inputs[2])));
    if (!types_agree) Unsupported(node, "data, weight, bias and output must share one dtype");
    if (t.code == kDLFloat && t.bits == 32 && t.lanes == 1) {
      p.dtype = CUDNN_DATA_FLOAT;
      p.math = CudnnMayUseTf32() ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    } else if (t.code == kDLFloat && t.bits == 16 && t.lanes == 1) {
      p.dtype = CUDNN_DATA_HALF;
    } else {
      Unsupported(node, "dtype " + std::string(ffi::DLDataTypeToString(t)) +
                            " (supported: float32, float16)");
    }

    const std::vector<int64_t>& x = g.Shape(node.inputs[0]);
    const std::vector<int64_t>& w = g.Shape(node.inputs[1]);
    const std::vector<int64_t>& y = g.Shape(Entry{nid, 0});
    if (x.size() != 4 || w.size() != 4 || y.size() != 4) Unsupported(node, "needs 4-D tensors");
    for (const auto* shape : {&x, &w, &y}) {
      for (int64_t d : *shape) {
        if (d <= 0 || d > INT32_MAX) Unsupported(node, "empty or oversized tensors");
      }
    }
    // (N, C, H, W) from NCHW or NHWC; (K, C/groups, R, S) from OIHW or OHWI.
    auto nchw_of = [nhwc](const std::vector<int64_t>& v) {
      return nhwc ? std::vector<int>{int(v[0]), int(v[3]), int(v[1]), int(v[2])}
                  : std::vector<int>{int(v[0]), int(v[1]), int(v[2]), int(v[3])};
    };
    std::vector<int> xs = nchw_of(x), ws = nchw_of(w), ys = nchw_of(y);
    p.n = xs[0], p.c = xs[1], p.h = xs[2], p.wd = xs[3];
    p.k = ws[0], p.kc = ws[1], p.r = ws[2], p.s = ws[3];
    p.oh = ys[2], p.ow = ys[3];
    p.groups = static_cast<int>(node.IntAttr("groups", 1));
    std::vector<int64_t> strides = node.IntsAttr("strides", {1, 1});
    std::vector<int64_t> dilation = node.IntsAttr("dilation", {1, 1});
    std::vector<int64_t> padding = node.IntsAttr("padding", {0, 0, 0, 0});
    if (padding.size() == 2) padding = {padding[0], padding[1], padding[0], padding[1]};
    if (strides.size() != 2 || dilation.size() != 2 || padding.size() != 4) {
      Unsupported(node, "strides, dilation and padding must have 2, 2 and 4 values");
    }
    if (padding[0] != padding[2] || padding[1] != padding[3]) {
      Unsupported(node, "asymmetric padding (cuDNN pads both sides of an axis alike)");
    }
    for (int64_t v : {strides[0], strides[1], dilation[0], dilation[1]}) {
      if (v < 1 || v > 1024) Unsupported(node, "strides and dilation must be positive");
    }
    for (int64_t v : {padding[0], padding[1]}) {
      if (v < 0 || v > 1024) Unsupported(node, "invalid padding");
    }
    p.pad_h = int(padding[0]), p.pad_w = int(padding[1]);
    p.stride_h = int(strides[0]), p.stride_w = int(strides[1]);
    p.dil_h = int(dilation[0]), p.dil_w = int(dilation[1]);
    if (p.groups < 1 || p.c % p.groups != 0 || p.k % p.groups != 0 || p.kc * p.groups != p.c) {
      Unsupported(node, "the weight's input channels do not match the data and groups");
    }
    auto out_size = [](int in, int pad, int kernel, int stride, int dil) {
      return (in + 2 * pad - dil * (kernel - 1) - 1) / stride + 1;
    };
    if (ys[0] != p.n || ys[1] != p.k || p.oh != out_size(p.h, p.pad_h, p.r, p.stride_h, p.dil_h) ||
        p.ow != out_size(p.wd, p.pad_w, p.s, p.stride_w, p.dil_w)) {
      Unsupported(node, "the output shape does not match the convolution");
    }
    if (p.has_bias) {
      int64_t numel = 1;
      for (int64_t d : g.Shape(node.inputs[2])) numel *= d;
      if (numel != p.k) Unsupported(node, "the bias must hold one value per output channel");
    }
    return p;
  }

  void Run(const ConvPlan& p, const std::vector<const DLTensor*>& entries,
           CudnnDeviceState* state) const {
    const CudnnApi& api = vendor();
    const std::string& at = p.where;
    CudnnDescriptors d{api};
    auto check = [&at](cudnnStatus_t st, const char* what) {
      CheckCudnn(st, std::string(what) + " for " + at);
    };
    check(api.CreateTensorDescriptor(&d.x), "cudnnCreateTensorDescriptor");
    check(api.SetTensor4dDescriptor(d.x, p.format, p.dtype, p.n, p.c, p.h, p.wd),
          "describing the data");
    check(api.CreateTensorDescriptor(&d.y), "cudnnCreateTensorDescriptor");
    check(api.SetTensor4dDescriptor(d.y, p.format, p.dtype, p.n, p.k, p.oh, p.ow),
          "describing the output");
    check(api.CreateFilterDescriptor(&d.w), "cudnnCreateFilterDescriptor");
    check(api.SetFilter4dDescriptor(d.w, p.dtype, p.format, p.k, p.kc, p.r, p.s),
          "describing the weight");
    check(api.CreateConvolutionDescriptor(&d.conv), "cudnnCreateConvolutionDescriptor");
    // fp32 accumulation for both dtypes (cuDNN's "pseudo-half" configuration for float16).
    check(api.SetConvolution2dDescriptor(d.conv, p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dil_h,
                                         p.dil_w, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
          "describing the convolution");
    check(api.SetConvolutionGroupCount(d.conv, p.groups), "setting the group count");
    check(api.SetConvolutionMathType(d.conv, p.math), "setting the math type");
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    if (!p.has_bias || p.relu) {
      // The fused form with an identity activation runs only IMPLICIT_PRECOMP_GEMM (with the
      // policy's math type); otherwise cuDNN's heuristics choose algorithm and math type.
      cudnnConvolutionFwdAlgoPerf_t perf[kHeuristicResults] = {};
      int found = 0;
      check(api.GetConvolutionForwardAlgorithm_v7(state->handle(), d.x, d.w, d.conv, d.y,
                                                  kHeuristicResults, &found, perf),
            "cudnnGetConvolutionForwardAlgorithm_v7");
      int chosen = -1;
      bool refused = false;  // a usable candidate the policy does not allow
      for (int i = 0; i < found && i < kHeuristicResults && chosen < 0; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
        if (MathAllowed(p, perf[i].mathType)) {
          chosen = i;
        } else {
          refused = true;
        }
      }
      if (chosen < 0 && refused) {
        backend::ThrowError("RuntimeError",
                            "cuDNN offers no algorithm without TF32 tensor cores for " + at + " (" +
                                kAllowTf32EnvVar +
                                "=0): unset it, or set it to 1, to "
                                "allow TF32 for float32 convolutions");
      }
      if (chosen < 0) check(CUDNN_STATUS_NOT_SUPPORTED, "finding a convolution algorithm");
      algo = perf[chosen].algo;
      if (perf[chosen].mathType != p.math) {
        check(api.SetConvolutionMathType(d.conv, perf[chosen].mathType),
              "setting the heuristic's math type");
      }
    }
    size_t bytes = 0;
    check(api.GetConvolutionForwardWorkspaceSize(state->handle(), d.x, d.w, d.conv, d.y, algo,
                                                 &bytes),
          "cudnnGetConvolutionForwardWorkspaceSize");
    void* workspace = bytes > 0 ? state->Workspace(bytes) : nullptr;
    float one = 1.f, zero = 0.f;
    void* y = TensorData(entries[p.out]);
    if (!p.has_bias) {
      check(api.ConvolutionForward(state->handle(), &one, d.x, TensorData(entries[p.x]), d.w,
                                   TensorData(entries[p.w]), d.conv, algo, workspace, bytes, &zero,
                                   d.y, y),
            "cudnnConvolutionForward");
      return;
    }
    check(api.CreateTensorDescriptor(&d.bias), "cudnnCreateTensorDescriptor");
    check(api.SetTensor4dDescriptor(d.bias, p.format, p.dtype, 1, p.k, 1, 1),
          "describing the bias");
    check(api.CreateActivationDescriptor(&d.act), "cudnnCreateActivationDescriptor");
    check(api.SetActivationDescriptor(d.act,
                                      p.relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                      CUDNN_NOT_PROPAGATE_NAN, 0.0),
          "describing the activation");
    // y = act(conv(x) + 0 * z + bias), with z = y (cuDNN requires a z; alpha2 = 0 ignores it).
    check(api.ConvolutionBiasActivationForward(state->handle(), &one, d.x, TensorData(entries[p.x]),
                                               d.w, TensorData(entries[p.w]), d.conv, algo,
                                               workspace, bytes, &zero, d.y, y, d.bias,
                                               TensorData(entries[p.bias]), d.act, d.y, y),
          "cudnnConvolutionBiasActivationForward");
  }

  /* How many candidates to ask the heuristic for: every forward algorithm (8 in cuDNN 9), and
   * room for one entry per math type of each. */
  static constexpr int kHeuristicResults = 16;

  /* Whether a heuristic candidate's math type keeps to the policy: never a down-conversion of
   * float32 to half (0.27 never asks for it), and for float32 without TF32 only FMA kernels. */
  static bool MathAllowed(const ConvPlan& p, cudnnMathType_t math) {
    if (math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;
    return p.math != CUDNN_FMA_MATH || math == CUDNN_FMA_MATH;
  }
};

}  // namespace

void RegisterCudnnJsonRuntime() {
  backend::json::RegisterJsonRuntimeLoader<CudnnJsonRuntime>("cudnn_json");
}

}  // namespace cuda
}  // namespace tvm_runtime
