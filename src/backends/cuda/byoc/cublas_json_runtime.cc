/*
 * cublas_json: apache-tvm 0.27's cuBLAS JSON runtime modules, run with cuBLASLt.
 *
 * 0.27's cuBLAS codegen (relax.ext.cublas) writes one kernel node per module, named by the
 * composite it matched: cublas.matmul[_transposed][_bias[_relu|_gelu]],
 * cublas.matmul_transposed_dequantize (attribute dq_scale) and cublas.matmul_transposed_multiply
 * (inputs 2 and 3: per-tensor scales of lhs and rhs).  As in 0.27 the name decides everything:
 *   "transposed"  the rhs is [.., N, K] instead of [.., K, N]
 *   "relu"/"gelu"/"bias"  the epilogue RELU_BIAS / GELU_BIAS / BIAS, with the bias as input 2
 *   "dequantize"  alpha = dq_scale
 *   "multiply"    scale pointers for fp8 inputs
 * Inputs float32, float16, bfloat16 (fp32 accumulation), int8 (int32 output) and
 * float8_e4m3fn.  Batched operands are flattened when only the lhs is batched (one GEMM over
 * all rows), else run as a strided batch of equal counts.  cuBLASLt's GELU epilogue is the
 * tanh approximation, as in 0.27.
 *
 * Numerics: the compute type is CUBLAS_COMPUTE_32F for every floating-point input (0.27's
 * choice), so float32 matmuls are plain fp32; TVM_CUDA_ALLOW_TF32=1 makes float32 matmuls
 * CUBLAS_COMPUTE_32F_FAST_TF32 instead (tf32_policy.h).
 *
 * cuBLASLt is column-major and our tensors row-major, so C = lhs . rhs is computed as
 * C^T = rhs^T . lhs^T: cuBLASLt's A is the rhs, its B the lhs, and its D (N x M, ld N) is C.
 *
 * Each thread keeps, per device, a cuBLASLt handle, a matmul preference and a 32 MiB workspace
 * (what NVIDIA recommends, and what 0.27 allocates), so concurrent calls on different streams
 * never share a workspace.  Work goes to the current stream of the device (tvm-ffi's stream
 * context), like every kernel of this backend.
 */
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_runtime/backend/byoc/json_runtime_module.h>
#include <tvm_runtime/backend/error.h>

#include <string>
#include <utility>
#include <vector>

#include "byoc/cublaslt_library.h"
#include "byoc/tf32_policy.h"
#include "byoc/vendor_json_runtime.h"

namespace tvm_runtime {
namespace cuda {
namespace {

using backend::json::Entry;
using backend::json::Node;
namespace ffi = ::tvm::ffi;

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

/* A thread's cuBLASLt state on one device. */
class LtDeviceState {
 public:
  LtDeviceState(const CublasLtApi& api, int device_id) : api_(api), workspace_(device_id) {
    CheckCublas(api_.Create(&handle_), "cublasLtCreate");
    CheckCublas(api_.MatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    size_t bytes = kWorkspaceBytes;
    CheckCublas(api_.MatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &bytes, sizeof(bytes)),
                "setting the workspace limit");
    workspace_.Reserve(kWorkspaceBytes, "the cuBLASLt workspace");
  }
  ~LtDeviceState() {
    if (pref_ != nullptr) api_.MatmulPreferenceDestroy(pref_);
    if (handle_ != nullptr) api_.Destroy(handle_);
  }
  LtDeviceState(const LtDeviceState&) = delete;
  LtDeviceState& operator=(const LtDeviceState&) = delete;

  cublasLtHandle_t handle() const { return handle_; }
  cublasLtMatmulPreference_t pref() const { return pref_; }
  void* workspace() { return workspace_.Reserve(kWorkspaceBytes, "the cuBLASLt workspace"); }

 private:
  const CublasLtApi& api_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  DeviceBuffer workspace_;
};

/* Destroys cuBLASLt descriptors when a call ends, however it ends. */
struct LtDescriptors {
  const CublasLtApi& api;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  ~LtDescriptors() {
    for (cublasLtMatrixLayout_t l : {a, b, d}) {
      if (l != nullptr) api.MatrixLayoutDestroy(l);
    }
    if (op != nullptr) api.MatmulDescDestroy(op);
  }
};

/* What one kernel node asks of cuBLASLt, derived once from the graph. */
struct MatmulPlan {
  uint32_t lhs = 0, rhs = 0, bias = 0, scale_lhs = 0, scale_rhs = 0, out = 0;  // entry ids
  bool has_bias = false, has_scales = false, transposed = false;
  int epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  cudaDataType_t ab_type = CUDA_R_32F, d_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  float alpha = 1.f;
  int64_t m = 0, n = 0, k = 0, batch = 1;  // C[batch][m][n] = lhs[batch][m][k] . rhs[batch][k][n]
  std::string where;
};

class CublasJsonRuntime final
    : public VendorJsonRuntime<CublasJsonRuntime, CublasLtApi, LtDeviceState, MatmulPlan> {
 public:
  using VendorJsonRuntime::VendorJsonRuntime;
  static constexpr const char* kKind = "cublas_json";

 private:
  friend class VendorJsonRuntime<CublasJsonRuntime, CublasLtApi, LtDeviceState, MatmulPlan>;

  static const CublasLtApi& OpenApi() { return CublasLt(); }

  void Launch(const std::vector<const DLTensor*>& entries, LtDeviceState& state, void* stream) {
    for (const MatmulPlan& plan : plans()) {
      Run(plan, entries, state, static_cast<cudaStream_t>(stream));
    }
  }

  static bool Is(DLDataType t, int code, int bits) {
    return t.code == code && t.bits == bits && t.lanes == 1;
  }

  MatmulPlan MakePlan(uint32_t nid) const {
    const auto& g = graph();
    const Node& node = g.nodes[nid];
    const std::string& name = node.name;
    MatmulPlan p;
    p.where = node.where;
    if (name.rfind("cublas.matmul", 0) != 0) {
      Unsupported(node, "operator '" + name + "' is not a cuBLAS composite (cublas.matmul...)");
    }
    if (node.num_outputs != 1) Unsupported(node, "kernels with several outputs");
    if (!IsGraphOutput(g, nid)) Unsupported(node, "its output is not an output of the module");
    p.transposed = NameHas(name, "transposed");
    p.has_scales = NameHas(name, "multiply");
    if (NameHas(name, "relu")) {
      p.epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
    } else if (NameHas(name, "gelu")) {
      p.epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    } else if (NameHas(name, "bias")) {
      p.epilogue = CUBLASLT_EPILOGUE_BIAS;
    }
    p.has_bias = p.epilogue != CUBLASLT_EPILOGUE_DEFAULT;
    size_t want = 2 + (p.has_bias ? 1 : 0) + (p.has_scales ? 2 : 0);
    if (node.inputs.size() != want) {
      Unsupported(node, "'" + name + "' takes " + std::to_string(want) + " inputs, the graph has " +
                            std::to_string(node.inputs.size()));
    }
    if (NameHas(name, "dequantize")) {
      if (!node.HasAttr("dq_scale")) Unsupported(node, "a dequantize kernel needs dq_scale");
      p.alpha = static_cast<float>(node.FloatAttr("dq_scale", 1.0));
    }
    p.lhs = g.EntryId(node.inputs[0]);
    p.rhs = g.EntryId(node.inputs[1]);
    p.out = g.EntryId(nid, 0);
    if (p.has_bias) p.bias = g.EntryId(node.inputs[2]);
    if (p.has_scales) {
      p.scale_lhs = g.EntryId(node.inputs[2]);
      p.scale_rhs = g.EntryId(node.inputs[3]);
    }
    Types(node, g.DType(node.inputs[0]), g.DType(node.inputs[1]), g.DType(Entry{nid, 0}), &p);
    if (p.has_bias && g.DType(node.inputs[2]) != g.DType(Entry{nid, 0})) {
      Unsupported(node, "the bias must have the output's dtype");
    }
    if (p.has_scales) {
      for (size_t i : {2, 3}) {
        const std::vector<int64_t>& s = g.Shape(node.inputs[i]);
        int64_t numel = 1;
        for (int64_t d : s) numel *= d;
        if (numel != 1 || !Is(g.DType(node.inputs[i]), kDLFloat, 32)) {
          Unsupported(node, "the scales of a multiply kernel are single float32 values");
        }
      }
    }
    Shapes(node, g.Shape(node.inputs[0]), g.Shape(node.inputs[1]), g.Shape(Entry{nid, 0}), &p);
    if (p.has_bias) {
      const std::vector<int64_t>& b = g.Shape(node.inputs[2]);
      int64_t numel = 1;
      for (int64_t d : b) numel *= d;
      if (b.empty() || b.back() != p.n || numel != p.n) {
        Unsupported(node,
                    "the bias must hold one value per output column (" + std::to_string(p.n) + ")");
      }
    }
    return p;
  }

  void Types(const Node& node, DLDataType a, DLDataType b, DLDataType c, MatmulPlan* p) const {
    if (a != b) Unsupported(node, "lhs and rhs must have the same dtype");
    if (Is(a, kDLFloat, 32)) {
      p->ab_type = CUDA_R_32F;
      if (CublasLtMayUseTf32()) p->compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    } else if (Is(a, kDLFloat, 16)) {
      p->ab_type = CUDA_R_16F;
    } else if (Is(a, kDLBfloat, 16)) {
      p->ab_type = CUDA_R_16BF;
    } else if (Is(a, kDLInt, 8)) {
      p->ab_type = CUDA_R_8I;
    } else if (Is(a, kDLFloat8_e4m3fn, 8)) {
      p->ab_type = CUDA_R_8F_E4M3;
    } else {
      Unsupported(node, "inputs of dtype " + std::string(ffi::DLDataTypeToString(a)) +
                            " (supported: float32, float16, bfloat16, int8, float8_e4m3fn)");
    }
    if (Is(c, kDLFloat, 32)) {
      p->d_type = CUDA_R_32F;
    } else if (Is(c, kDLFloat, 16)) {
      p->d_type = CUDA_R_16F;
    } else if (Is(c, kDLBfloat, 16)) {
      p->d_type = CUDA_R_16BF;
    } else if (Is(c, kDLInt, 32)) {
      p->d_type = CUDA_R_32I;
      p->compute = CUBLAS_COMPUTE_32I;
    } else {
      Unsupported(node, "an output of dtype " + std::string(ffi::DLDataTypeToString(c)));
    }
    if ((p->ab_type == CUDA_R_8I) != (p->d_type == CUDA_R_32I)) {
      Unsupported(node, "int8 inputs go with an int32 output, and only they");
    }
    if (p->compute == CUBLAS_COMPUTE_32I && (p->has_bias || p->alpha != 1.f)) {
      Unsupported(node, "int8 kernels take no bias and no dequantize scale");
    }
  }

  void Shapes(const Node& node, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
              const std::vector<int64_t>& c, MatmulPlan* p) const {
    if (a.size() < 2 || b.size() < 2) Unsupported(node, "matmul operands have 2 or more axes");
    int64_t k = a.back();
    int64_t kb = p->transposed ? b.back() : b[b.size() - 2];
    int64_t n = p->transposed ? b[b.size() - 2] : b.back();
    if (k != kb) Unsupported(node, "the reduction axes of lhs and rhs differ");
    auto batches = [](const std::vector<int64_t>& s) {
      int64_t count = 1;
      for (size_t i = 0; i + 2 < s.size(); ++i) count *= s[i];
      return count;
    };
    int64_t batch_a = batches(a), batch_b = batches(b);
    p->k = k;
    p->n = n;
    if (b.size() == 2) {
      // Only the lhs is batched: its rows, across batches, are one GEMM's rows.
      p->m = 1;
      for (size_t i = 0; i + 1 < a.size(); ++i) p->m *= a[i];
      p->batch = 1;
    } else if (batch_a == batch_b) {
      p->m = a[a.size() - 2];
      p->batch = batch_a;
    } else {
      Unsupported(node,
                  "batched matmul needs equal batch counts, or a 2-D rhs (cuBLASLt has no "
                  "broadcast batches)");
    }
    int64_t numel_c = 1;
    for (int64_t d : c) numel_c *= d;
    if (c.size() < 2 || c.back() != n || numel_c != p->m * p->n * p->batch) {
      Unsupported(node, "the output shape does not match lhs . rhs");
    }
    for (int64_t d : {p->m, p->n, p->k, p->batch}) {
      if (d <= 0 || d > INT32_MAX) Unsupported(node, "empty or oversized matrices");
    }
  }

  void Run(const MatmulPlan& p, const std::vector<const DLTensor*>& entries, LtDeviceState& state,
           cudaStream_t stream) const {
    const CublasLtApi& api = vendor();
    LtDescriptors desc{api};
    const std::string& at = p.where;
    cudaDataType_t scale_type = p.compute == CUBLAS_COMPUTE_32I ? CUDA_R_32I : CUDA_R_32F;
    CheckCublas(api.MatmulDescCreate(&desc.op, p.compute, scale_type),
                "cublasLtMatmulDescCreate for " + at);
    auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* value, size_t size,
                   const char* what) {
      CheckCublas(api.MatmulDescSetAttribute(desc.op, attr, value, size),
                  std::string("setting ") + what + " of " + at);
    };
    int op_a = p.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = CUBLAS_OP_N;
    set(CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a), "TRANSA");
    set(CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b), "TRANSB");
    if (p.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
      set(CUBLASLT_MATMUL_DESC_EPILOGUE, &p.epilogue, sizeof(p.epilogue), "the epilogue");
      const void* bias = TensorData(entries[p.bias]);
      set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias), "the bias");
    }
    if (p.has_scales) {
      // cuBLASLt's A is our rhs, its B our lhs.
      const void* scale_a = TensorData(entries[p.scale_rhs]);
      const void* scale_b = TensorData(entries[p.scale_lhs]);
      set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a, sizeof(scale_a), "the rhs scale");
      set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b, sizeof(scale_b), "the lhs scale");
    }
    // Column-major views of the row-major operands (see the top of this file).
    uint64_t a_rows = p.transposed ? p.k : p.n, a_cols = p.transposed ? p.n : p.k;
    CheckCublas(
        api.MatrixLayoutCreate(&desc.a, p.ab_type, a_rows, a_cols, static_cast<int64_t>(a_rows)),
        "describing the rhs of " + at);
    CheckCublas(api.MatrixLayoutCreate(&desc.b, p.ab_type, p.k, p.m, p.k),
                "describing the lhs of " + at);
    CheckCublas(api.MatrixLayoutCreate(&desc.d, p.d_type, p.n, p.m, p.n),
                "describing the output of " + at);
    if (p.batch > 1) {
      int32_t count = static_cast<int32_t>(p.batch);
      for (auto [layout, stride] : {std::pair{desc.a, p.k * p.n}, std::pair{desc.b, p.m * p.k},
                                    std::pair{desc.d, p.m * p.n}}) {
        CheckCublas(api.MatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                 sizeof(count)),
                    "setting the batch count of " + at);
        CheckCublas(
            api.MatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                         &stride, sizeof(stride)),
            "setting the batch stride of " + at);
      }
    }
    cublasLtMatmulHeuristicResult_t best{};
    int found = 0;
    CheckCublas(api.MatmulAlgoGetHeuristic(state.handle(), desc.op, desc.a, desc.b, desc.d, desc.d,
                                           state.pref(), 1, &best, &found),
                "cublasLtMatmulAlgoGetHeuristic for " + at);
    if (found == 0) CheckCublas(CUBLAS_STATUS_NOT_SUPPORTED, "no cuBLASLt algorithm for " + at);
    float alpha_f = p.alpha, beta_f = 0.f;
    int32_t alpha_i = 1, beta_i = 0;
    bool integer = p.compute == CUBLAS_COMPUTE_32I;
    void* out = TensorData(entries[p.out]);
    CheckCublas(
        api.Matmul(state.handle(), desc.op, integer ? static_cast<void*>(&alpha_i) : &alpha_f,
                   TensorData(entries[p.rhs]), desc.a, TensorData(entries[p.lhs]), desc.b,
                   integer ? static_cast<void*>(&beta_i) : &beta_f, out, desc.d, out, desc.d,
                   &best.algo, state.workspace(), kWorkspaceBytes, stream),
        "cublasLtMatmul for " + at);
  }
};

}  // namespace

void RegisterCublasJsonRuntime() {
  backend::json::RegisterJsonRuntimeLoader<CublasJsonRuntime>("cublas_json");
}

}  // namespace cuda
}  // namespace tvm_runtime
