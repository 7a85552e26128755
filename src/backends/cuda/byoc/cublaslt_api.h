/*
 * The subset of cuBLASLt (cublasLt.h, library_types.h) that cublas_json uses, declared here so
 * the wheel builds without a CUDA toolkit and never links cuBLAS: libcublasLt is dlopen()ed
 * when the first cublas_json module is initialized (cublaslt_library.h).  Values and layouts
 * are those of cuBLAS 12 and 13, whose cuBLASLt ABI is the same for every entry point below.
 *
 * tests/cuda/check_cublaslt_api_decls.cc compiles this header with
 * TVM_RUNTIME_CUDA_CHECK_AGAINST_CUBLASLT_H against the real cublasLt.h: the types then become
 * cuBLAS's own, and static_asserts compare every constant, struct layout and signature.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUBLASLT_API_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUBLASLT_API_H_

#include <cstddef>
#include <cstdint>

namespace tvm_runtime {
namespace cuda {

#ifdef TVM_RUNTIME_CUDA_CHECK_AGAINST_CUBLASLT_H
using cublasStatus_t = ::cublasStatus_t;
using cublasLtHandle_t = ::cublasLtHandle_t;
using cublasLtMatmulDesc_t = ::cublasLtMatmulDesc_t;
using cublasLtMatrixLayout_t = ::cublasLtMatrixLayout_t;
using cublasLtMatmulPreference_t = ::cublasLtMatmulPreference_t;
using cublasLtMatmulAlgo_t = ::cublasLtMatmulAlgo_t;
using cublasLtMatmulHeuristicResult_t = ::cublasLtMatmulHeuristicResult_t;
using cublasComputeType_t = ::cublasComputeType_t;
using cudaDataType_t = ::cudaDataType_t;
using cublasLtMatmulDescAttributes_t = ::cublasLtMatmulDescAttributes_t;
using cublasLtMatrixLayoutAttribute_t = ::cublasLtMatrixLayoutAttribute_t;
using cublasLtMatmulPreferenceAttributes_t = ::cublasLtMatmulPreferenceAttributes_t;
using cudaStream_t = ::cudaStream_t;
#else
// The C enums of cuBLAS are int-sized; the opaque handles are pointers.
using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext*;
struct cublasLtMatmulDescOpaque_t {
  uint64_t data[32];
};
struct cublasLtMatrixLayoutOpaque_t {
  uint64_t data[8];
};
struct cublasLtMatmulPreferenceOpaque_t {
  uint64_t data[8];
};
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque_t*;
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque_t*;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque_t*;
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
using cublasComputeType_t = int;
using cudaDataType_t = int;
using cublasLtMatmulDescAttributes_t = int;
using cublasLtMatrixLayoutAttribute_t = int;
using cublasLtMatmulPreferenceAttributes_t = int;
using cudaStream_t = struct CUstream_st*;

constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr cublasStatus_t CUBLAS_STATUS_NOT_SUPPORTED = 15;
constexpr cudaDataType_t CUDA_R_32F = 0;
constexpr cudaDataType_t CUDA_R_16F = 2;
constexpr cudaDataType_t CUDA_R_8I = 3;
constexpr cudaDataType_t CUDA_R_32I = 10;
constexpr cudaDataType_t CUDA_R_16BF = 14;
constexpr cudaDataType_t CUDA_R_8F_E4M3 = 28;
constexpr cublasComputeType_t CUBLAS_COMPUTE_32F = 68;
constexpr cublasComputeType_t CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
constexpr cublasComputeType_t CUBLAS_COMPUTE_32I = 72;
constexpr int CUBLAS_OP_N = 0;
constexpr int CUBLAS_OP_T = 1;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSA = 3;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSB = 4;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_EPILOGUE = 7;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18;
constexpr cublasLtMatrixLayoutAttribute_t CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5;
constexpr cublasLtMatrixLayoutAttribute_t CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;
constexpr cublasLtMatmulPreferenceAttributes_t CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;
constexpr int CUBLASLT_EPILOGUE_DEFAULT = 1;
constexpr int CUBLASLT_EPILOGUE_RELU_BIAS = 6;
constexpr int CUBLASLT_EPILOGUE_BIAS = 4;
constexpr int CUBLASLT_EPILOGUE_GELU_BIAS = 36;
#endif

/* The entry points, resolved by name from libcublasLt.so.{13,12}. */
struct CublasLtApi {
  cublasStatus_t (*Create)(cublasLtHandle_t* handle);
  cublasStatus_t (*Destroy)(cublasLtHandle_t handle);
  size_t (*GetVersion)(void);
  const char* (*GetStatusString)(cublasStatus_t status);
  cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                     cudaDataType_t scale);
  cublasStatus_t (*MatmulDescDestroy)(cublasLtMatmulDesc_t desc);
  cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t desc,
                                           cublasLtMatmulDescAttributes_t attr, const void* buf,
                                           size_t size);
  cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t* layout, cudaDataType_t type,
                                       uint64_t rows, uint64_t cols, int64_t ld);
  cublasStatus_t (*MatrixLayoutDestroy)(cublasLtMatrixLayout_t layout);
  cublasStatus_t (*MatrixLayoutSetAttribute)(cublasLtMatrixLayout_t layout,
                                             cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                             size_t size);
  cublasStatus_t (*MatmulPreferenceCreate)(cublasLtMatmulPreference_t* pref);
  cublasStatus_t (*MatmulPreferenceDestroy)(cublasLtMatmulPreference_t pref);
  cublasStatus_t (*MatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t pref,
                                                 cublasLtMatmulPreferenceAttributes_t attr,
                                                 const void* buf, size_t size);
  cublasStatus_t (*MatmulAlgoGetHeuristic)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                           cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                           cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                           cublasLtMatmulPreference_t pref, int requested,
                                           cublasLtMatmulHeuristicResult_t results[],
                                           int* returned);
  cublasStatus_t (*Matmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                           const void* a, cublasLtMatrixLayout_t a_layout, const void* b,
                           cublasLtMatrixLayout_t b_layout, const void* beta, const void* c,
                           cublasLtMatrixLayout_t c_layout, void* d,
                           cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t* algo,
                           void* workspace, size_t workspace_size, cudaStream_t stream);
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUBLASLT_API_H_
