/*
 * The subset of cuDNN 9's C API (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h) that cudnn_json uses,
 * declared here so the wheel builds without cuDNN: libcudnn.so.9 is dlopen()ed when the first
 * cudnn_json module is initialized (cudnn_library.h).  The handle and descriptor types are
 * cuDNN's own opaque struct pointers, so the declarations below are the header's exactly.
 *
 * tests/cuda/check_cudnn_api_decls.cc compiles this header with
 * TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDNN_H against the real cudnn.h and compares every constant,
 * struct layout and signature.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDNN_API_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDNN_API_H_

#include <cstddef>

struct cudnnContext;
struct cudnnTensorStruct;
struct cudnnFilterStruct;
struct cudnnConvolutionStruct;
struct cudnnActivationStruct;
struct CUstream_st;

namespace tvm_runtime {
namespace cuda {

#ifdef TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDNN_H
using cudnnStatus_t = ::cudnnStatus_t;
using cudnnDataType_t = ::cudnnDataType_t;
using cudnnTensorFormat_t = ::cudnnTensorFormat_t;
using cudnnConvolutionMode_t = ::cudnnConvolutionMode_t;
using cudnnActivationMode_t = ::cudnnActivationMode_t;
using cudnnNanPropagation_t = ::cudnnNanPropagation_t;
using cudnnConvolutionFwdAlgo_t = ::cudnnConvolutionFwdAlgo_t;
using cudnnConvolutionFwdAlgoPerf_t = ::cudnnConvolutionFwdAlgoPerf_t;
using cudnnMathType_t = ::cudnnMathType_t;
#else
// cuDNN's C enums are int-sized.
using cudnnStatus_t = int;
using cudnnDataType_t = int;
using cudnnTensorFormat_t = int;
using cudnnConvolutionMode_t = int;
using cudnnActivationMode_t = int;
using cudnnNanPropagation_t = int;
using cudnnConvolutionFwdAlgo_t = int;
using cudnnMathType_t = int;
struct cudnnConvolutionFwdAlgoPerf_t {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  cudnnMathType_t mathType;
  int reserved[3];
};

constexpr cudnnStatus_t CUDNN_STATUS_SUCCESS = 0;
constexpr cudnnStatus_t CUDNN_STATUS_NOT_SUPPORTED = 3000;
constexpr cudnnDataType_t CUDNN_DATA_FLOAT = 0;
constexpr cudnnDataType_t CUDNN_DATA_HALF = 2;
constexpr cudnnTensorFormat_t CUDNN_TENSOR_NCHW = 0;
constexpr cudnnTensorFormat_t CUDNN_TENSOR_NHWC = 1;
constexpr cudnnConvolutionMode_t CUDNN_CROSS_CORRELATION = 1;
constexpr cudnnActivationMode_t CUDNN_ACTIVATION_RELU = 1;
constexpr cudnnActivationMode_t CUDNN_ACTIVATION_IDENTITY = 5;
constexpr cudnnNanPropagation_t CUDNN_NOT_PROPAGATE_NAN = 0;
constexpr cudnnConvolutionFwdAlgo_t CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM = 1;
constexpr cudnnMathType_t CUDNN_DEFAULT_MATH = 0;
constexpr cudnnMathType_t CUDNN_TENSOR_OP_MATH = 1;
constexpr cudnnMathType_t CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2;
constexpr cudnnMathType_t CUDNN_FMA_MATH = 3;
#endif

using cudnnHandle_t = ::cudnnContext*;
using cudnnTensorDescriptor_t = ::cudnnTensorStruct*;
using cudnnFilterDescriptor_t = ::cudnnFilterStruct*;
using cudnnConvolutionDescriptor_t = ::cudnnConvolutionStruct*;
using cudnnActivationDescriptor_t = ::cudnnActivationStruct*;
using cudnnStream_t = ::CUstream_st*;

/* The entry points, resolved by name from libcudnn.so.9. */
struct CudnnApi {
  cudnnStatus_t (*Create)(cudnnHandle_t* handle);
  cudnnStatus_t (*Destroy)(cudnnHandle_t handle);
  cudnnStatus_t (*SetStream)(cudnnHandle_t handle, cudnnStream_t stream);
  const char* (*GetErrorString)(cudnnStatus_t status);
  size_t (*GetVersion)(void);
  cudnnStatus_t (*CreateTensorDescriptor)(cudnnTensorDescriptor_t* desc);
  cudnnStatus_t (*SetTensor4dDescriptor)(cudnnTensorDescriptor_t desc, cudnnTensorFormat_t format,
                                         cudnnDataType_t type, int n, int c, int h, int w);
  cudnnStatus_t (*DestroyTensorDescriptor)(cudnnTensorDescriptor_t desc);
  cudnnStatus_t (*CreateFilterDescriptor)(cudnnFilterDescriptor_t* desc);
  cudnnStatus_t (*SetFilter4dDescriptor)(cudnnFilterDescriptor_t desc, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w);
  cudnnStatus_t (*DestroyFilterDescriptor)(cudnnFilterDescriptor_t desc);
  cudnnStatus_t (*CreateConvolutionDescriptor)(cudnnConvolutionDescriptor_t* desc);
  cudnnStatus_t (*SetConvolution2dDescriptor)(cudnnConvolutionDescriptor_t desc, int pad_h,
                                              int pad_w, int u, int v, int dilation_h,
                                              int dilation_w, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute);
  cudnnStatus_t (*SetConvolutionGroupCount)(cudnnConvolutionDescriptor_t desc, int groups);
  cudnnStatus_t (*SetConvolutionMathType)(cudnnConvolutionDescriptor_t desc, cudnnMathType_t math);
  cudnnStatus_t (*DestroyConvolutionDescriptor)(cudnnConvolutionDescriptor_t desc);
  cudnnStatus_t (*CreateActivationDescriptor)(cudnnActivationDescriptor_t* desc);
  cudnnStatus_t (*SetActivationDescriptor)(cudnnActivationDescriptor_t desc,
                                           cudnnActivationMode_t mode, cudnnNanPropagation_t nan,
                                           double coef);
  cudnnStatus_t (*DestroyActivationDescriptor)(cudnnActivationDescriptor_t desc);
  cudnnStatus_t (*GetConvolutionForwardAlgorithm_v7)(
      cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
      const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y, const int requested,
      int* returned, cudnnConvolutionFwdAlgoPerf_t* results);
  cudnnStatus_t (*GetConvolutionForwardWorkspaceSize)(
      cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
      const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y,
      cudnnConvolutionFwdAlgo_t algo, size_t* bytes);
  cudnnStatus_t (*ConvolutionForward)(cudnnHandle_t handle, const void* alpha,
                                      const cudnnTensorDescriptor_t x_desc, const void* x,
                                      const cudnnFilterDescriptor_t w_desc, const void* w,
                                      const cudnnConvolutionDescriptor_t conv,
                                      cudnnConvolutionFwdAlgo_t algo, void* workspace,
                                      size_t workspace_bytes, const void* beta,
                                      const cudnnTensorDescriptor_t y_desc, void* y);
  cudnnStatus_t (*ConvolutionBiasActivationForward)(
      cudnnHandle_t handle, const void* alpha1, const cudnnTensorDescriptor_t x_desc, const void* x,
      const cudnnFilterDescriptor_t w_desc, const void* w, const cudnnConvolutionDescriptor_t conv,
      cudnnConvolutionFwdAlgo_t algo, void* workspace, size_t workspace_bytes, const void* alpha2,
      const cudnnTensorDescriptor_t z_desc, const void* z, const cudnnTensorDescriptor_t bias_desc,
      const void* bias, const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t y_desc,
      void* y);
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDNN_API_H_
