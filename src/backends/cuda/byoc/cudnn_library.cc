#include "byoc/cudnn_library.h"

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

#include "pip_library.h"

namespace tvm_runtime {
namespace cuda {

namespace {

std::string ResolveCudnnApi(void* handle, CudnnApi* api) {
  backend::SymbolResolver r(handle);
  r.Required({"cudnnCreate"}, &api->Create);
  r.Required({"cudnnDestroy"}, &api->Destroy);
  r.Required({"cudnnSetStream"}, &api->SetStream);
  r.Required({"cudnnGetErrorString"}, &api->GetErrorString);
  r.Required({"cudnnGetVersion"}, &api->GetVersion);
  r.Required({"cudnnCreateTensorDescriptor"}, &api->CreateTensorDescriptor);
  r.Required({"cudnnSetTensor4dDescriptor"}, &api->SetTensor4dDescriptor);
  r.Required({"cudnnDestroyTensorDescriptor"}, &api->DestroyTensorDescriptor);
  r.Required({"cudnnCreateFilterDescriptor"}, &api->CreateFilterDescriptor);
  r.Required({"cudnnSetFilter4dDescriptor"}, &api->SetFilter4dDescriptor);
  r.Required({"cudnnDestroyFilterDescriptor"}, &api->DestroyFilterDescriptor);
  r.Required({"cudnnCreateConvolutionDescriptor"}, &api->CreateConvolutionDescriptor);
  r.Required({"cudnnSetConvolution2dDescriptor"}, &api->SetConvolution2dDescriptor);
  r.Required({"cudnnSetConvolutionGroupCount"}, &api->SetConvolutionGroupCount);
  r.Required({"cudnnSetConvolutionMathType"}, &api->SetConvolutionMathType);
  r.Required({"cudnnDestroyConvolutionDescriptor"}, &api->DestroyConvolutionDescriptor);
  r.Required({"cudnnCreateActivationDescriptor"}, &api->CreateActivationDescriptor);
  r.Required({"cudnnSetActivationDescriptor"}, &api->SetActivationDescriptor);
  r.Required({"cudnnDestroyActivationDescriptor"}, &api->DestroyActivationDescriptor);
  r.Required({"cudnnGetConvolutionForwardAlgorithm_v7"}, &api->GetConvolutionForwardAlgorithm_v7);
  r.Required({"cudnnGetConvolutionForwardWorkspaceSize"}, &api->GetConvolutionForwardWorkspaceSize);
  r.Required({"cudnnConvolutionForward"}, &api->ConvolutionForward);
  r.Required({"cudnnConvolutionBiasActivationForward"}, &api->ConvolutionBiasActivationForward);
  return r.missing();
}

LazyPipLibrary<CudnnApi>& CudnnLibrary() {
  static LazyPipLibrary<CudnnApi> lib(
      {"cuDNN 9 (libcudnn.so.9, which cudnn_json modules need)",
       kCudnnLibraryEnvVar,
       "cudnn",
       {"libcudnn.so.9"},
       "pip install \"tvm-runtime-cuda[cudnn]\" (CUDA 13 drivers) or "
       "\"tvm-runtime-cuda[cudnn-cu12]\" (CUDA 12 drivers)"},
      &ResolveCudnnApi);
  return lib;
}

}  // namespace

const CudnnApi& Cudnn() { return CudnnLibrary().Get().api; }

std::string CudnnStatus() { return CudnnLibrary().Status(); }

void CheckCudnn(cudnnStatus_t status, const std::string& what) {
  CudnnLibrary().Check(status, CUDNN_STATUS_SUCCESS, "cuDNN", what, &CudnnApi::GetErrorString);
}

}  // namespace cuda
}  // namespace tvm_runtime
