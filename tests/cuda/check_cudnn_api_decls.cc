/*
 * Compile-time check of src/backends/cuda/byoc/cudnn_api.h against the real cudnn.h: every
 * constant, struct layout and entry-point signature the backend declares for itself must equal
 * cuDNN's. Built by test_vendor_api_decls.py wherever the headers exist (the nvidia-cudnn wheels
 * ship them); the backend itself never needs them.
 */
#include <cudnn.h>

#include <cstddef>
#include <type_traits>

#define TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDNN_H
#include "byoc/cudnn_api.h"

namespace ours = tvm_runtime::cuda;

// The constants and the perf struct are ours only when not checking: include the header again,
// renamed, to compare them.
namespace decl {
#undef TVM_RUNTIME_BACKENDS_CUDA_CUDNN_API_H_
#undef TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDNN_H
#define tvm_runtime decl_tvm_runtime
#include "byoc/cudnn_api.h"
#undef tvm_runtime
}  // namespace decl

namespace mine = decl::decl_tvm_runtime::cuda;

#define SAME_VALUE(name) \
  static_assert(static_cast<long long>(mine::name) == static_cast<long long>(::name), #name)
SAME_VALUE(CUDNN_STATUS_SUCCESS);
SAME_VALUE(CUDNN_STATUS_NOT_SUPPORTED);
SAME_VALUE(CUDNN_DATA_FLOAT);
SAME_VALUE(CUDNN_DATA_HALF);
SAME_VALUE(CUDNN_TENSOR_NCHW);
SAME_VALUE(CUDNN_TENSOR_NHWC);
SAME_VALUE(CUDNN_CROSS_CORRELATION);
SAME_VALUE(CUDNN_ACTIVATION_RELU);
SAME_VALUE(CUDNN_ACTIVATION_IDENTITY);
SAME_VALUE(CUDNN_NOT_PROPAGATE_NAN);
SAME_VALUE(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
SAME_VALUE(CUDNN_DEFAULT_MATH);
SAME_VALUE(CUDNN_TENSOR_OP_MATH);
SAME_VALUE(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
SAME_VALUE(CUDNN_FMA_MATH);
static_assert(sizeof(mine::cudnnMathType_t) == sizeof(::cudnnMathType_t), "cudnnMathType_t");

static_assert(sizeof(mine::cudnnConvolutionFwdAlgoPerf_t) ==
                  sizeof(::cudnnConvolutionFwdAlgoPerf_t),
              "perf size");
static_assert(offsetof(mine::cudnnConvolutionFwdAlgoPerf_t, memory) ==
                  offsetof(::cudnnConvolutionFwdAlgoPerf_t, memory),
              "memory");
static_assert(offsetof(mine::cudnnConvolutionFwdAlgoPerf_t, mathType) ==
                  offsetof(::cudnnConvolutionFwdAlgoPerf_t, mathType),
              "mathType");
static_assert(offsetof(mine::cudnnConvolutionFwdAlgoPerf_t, status) ==
                  offsetof(::cudnnConvolutionFwdAlgoPerf_t, status),
              "status");

#define SAME_FN(field, symbol) \
  static_assert(std::is_same<decltype(ours::CudnnApi::field), decltype(&::symbol)>::value, #symbol)
SAME_FN(Create, cudnnCreate);
SAME_FN(Destroy, cudnnDestroy);
SAME_FN(SetStream, cudnnSetStream);
SAME_FN(GetErrorString, cudnnGetErrorString);
SAME_FN(GetVersion, cudnnGetVersion);
SAME_FN(CreateTensorDescriptor, cudnnCreateTensorDescriptor);
SAME_FN(SetTensor4dDescriptor, cudnnSetTensor4dDescriptor);
SAME_FN(DestroyTensorDescriptor, cudnnDestroyTensorDescriptor);
SAME_FN(CreateFilterDescriptor, cudnnCreateFilterDescriptor);
SAME_FN(SetFilter4dDescriptor, cudnnSetFilter4dDescriptor);
SAME_FN(DestroyFilterDescriptor, cudnnDestroyFilterDescriptor);
SAME_FN(CreateConvolutionDescriptor, cudnnCreateConvolutionDescriptor);
SAME_FN(SetConvolution2dDescriptor, cudnnSetConvolution2dDescriptor);
SAME_FN(SetConvolutionGroupCount, cudnnSetConvolutionGroupCount);
SAME_FN(SetConvolutionMathType, cudnnSetConvolutionMathType);
SAME_FN(DestroyConvolutionDescriptor, cudnnDestroyConvolutionDescriptor);
SAME_FN(CreateActivationDescriptor, cudnnCreateActivationDescriptor);
SAME_FN(SetActivationDescriptor, cudnnSetActivationDescriptor);
SAME_FN(DestroyActivationDescriptor, cudnnDestroyActivationDescriptor);
SAME_FN(GetConvolutionForwardAlgorithm_v7, cudnnGetConvolutionForwardAlgorithm_v7);
SAME_FN(GetConvolutionForwardWorkspaceSize, cudnnGetConvolutionForwardWorkspaceSize);
SAME_FN(ConvolutionForward, cudnnConvolutionForward);
SAME_FN(ConvolutionBiasActivationForward, cudnnConvolutionBiasActivationForward);

int main() { return 0; }
