/*
 * Compile-time check of src/backends/cuda/byoc/cublaslt_api.h against the real cublasLt.h: every
 * constant, struct layout and entry-point signature the backend declares for itself must equal
 * cuBLAS's.  Built by test_vendor_api_decls.py wherever the headers exist (the nvidia-cublas
 * wheel ships them); the backend itself never needs them.
 */
#include <cublasLt.h>

#include <cstddef>
#include <type_traits>

#define TVM_RUNTIME_CUDA_CHECK_AGAINST_CUBLASLT_H
#include "byoc/cublaslt_api.h"

namespace ours = tvm_runtime::cuda;

// The constants are declared only when not checking, so compare them by re-including the
// header's values under another name.
namespace decl {
#undef TVM_RUNTIME_BACKENDS_CUDA_CUBLASLT_API_H_
#undef TVM_RUNTIME_CUDA_CHECK_AGAINST_CUBLASLT_H
#define tvm_runtime decl_tvm_runtime
#include "byoc/cublaslt_api.h"
#undef tvm_runtime
}  // namespace decl

namespace mine = decl::decl_tvm_runtime::cuda;

#define SAME_VALUE(name) \
  static_assert(static_cast<long long>(mine::name) == static_cast<long long>(::name), #name)
SAME_VALUE(CUBLAS_STATUS_SUCCESS);
SAME_VALUE(CUBLAS_STATUS_NOT_SUPPORTED);
SAME_VALUE(CUDA_R_32F);
SAME_VALUE(CUDA_R_16F);
SAME_VALUE(CUDA_R_8I);
SAME_VALUE(CUDA_R_32I);
SAME_VALUE(CUDA_R_16BF);
SAME_VALUE(CUDA_R_8F_E4M3);
SAME_VALUE(CUBLAS_COMPUTE_32F);
SAME_VALUE(CUBLAS_COMPUTE_32F_FAST_TF32);
SAME_VALUE(CUBLAS_COMPUTE_32I);
SAME_VALUE(CUBLAS_OP_N);
SAME_VALUE(CUBLAS_OP_T);
SAME_VALUE(CUBLASLT_MATMUL_DESC_TRANSA);
SAME_VALUE(CUBLASLT_MATMUL_DESC_TRANSB);
SAME_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE);
SAME_VALUE(CUBLASLT_MATMUL_DESC_BIAS_POINTER);
SAME_VALUE(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER);
SAME_VALUE(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER);
SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
SAME_VALUE(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
SAME_VALUE(CUBLASLT_EPILOGUE_DEFAULT);
SAME_VALUE(CUBLASLT_EPILOGUE_RELU_BIAS);
SAME_VALUE(CUBLASLT_EPILOGUE_BIAS);
SAME_VALUE(CUBLASLT_EPILOGUE_GELU_BIAS);

// Our own structs (used when not checking) must be layout-identical to cuBLAS's.
static_assert(sizeof(mine::cublasLtMatmulHeuristicResult_t) ==
                  sizeof(::cublasLtMatmulHeuristicResult_t),
              "heuristic result size");
static_assert(offsetof(mine::cublasLtMatmulHeuristicResult_t, workspaceSize) ==
                  offsetof(::cublasLtMatmulHeuristicResult_t, workspaceSize),
              "workspaceSize");
static_assert(offsetof(mine::cublasLtMatmulHeuristicResult_t, state) ==
                  offsetof(::cublasLtMatmulHeuristicResult_t, state),
              "state");
static_assert(sizeof(mine::cublasLtMatmulAlgo_t) == sizeof(::cublasLtMatmulAlgo_t), "algo");

// With the real types in place, each entry point's type must be exactly the symbol's.
#define SAME_FN(field, symbol)                                                                \
  static_assert(std::is_same<decltype(ours::CublasLtApi::field), decltype(&::symbol)>::value, \
                #symbol)
SAME_FN(Create, cublasLtCreate);
SAME_FN(Destroy, cublasLtDestroy);
SAME_FN(GetVersion, cublasLtGetVersion);
SAME_FN(GetStatusString, cublasLtGetStatusString);
SAME_FN(MatmulDescCreate, cublasLtMatmulDescCreate);
SAME_FN(MatmulDescDestroy, cublasLtMatmulDescDestroy);
SAME_FN(MatmulDescSetAttribute, cublasLtMatmulDescSetAttribute);
SAME_FN(MatrixLayoutCreate, cublasLtMatrixLayoutCreate);
SAME_FN(MatrixLayoutDestroy, cublasLtMatrixLayoutDestroy);
SAME_FN(MatrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute);
SAME_FN(MatmulPreferenceCreate, cublasLtMatmulPreferenceCreate);
SAME_FN(MatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy);
SAME_FN(MatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute);
SAME_FN(MatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic);
SAME_FN(Matmul, cublasLtMatmul);

int main() { return 0; }
