#include "byoc/cublaslt_library.h"

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

#include "pip_library.h"

namespace tvm_runtime {
namespace cuda {

namespace {

std::string ResolveCublasLtApi(void* handle, CublasLtApi* api) {
  backend::SymbolResolver r(handle);
  r.Required({"cublasLtCreate"}, &api->Create);
  r.Required({"cublasLtDestroy"}, &api->Destroy);
  r.Required({"cublasLtGetVersion"}, &api->GetVersion);
  r.Required({"cublasLtGetStatusString"}, &api->GetStatusString);
  r.Required({"cublasLtMatmulDescCreate"}, &api->MatmulDescCreate);
  r.Required({"cublasLtMatmulDescDestroy"}, &api->MatmulDescDestroy);
  r.Required({"cublasLtMatmulDescSetAttribute"}, &api->MatmulDescSetAttribute);
  r.Required({"cublasLtMatrixLayoutCreate"}, &api->MatrixLayoutCreate);
  r.Required({"cublasLtMatrixLayoutDestroy"}, &api->MatrixLayoutDestroy);
  r.Required({"cublasLtMatrixLayoutSetAttribute"}, &api->MatrixLayoutSetAttribute);
  r.Required({"cublasLtMatmulPreferenceCreate"}, &api->MatmulPreferenceCreate);
  r.Required({"cublasLtMatmulPreferenceDestroy"}, &api->MatmulPreferenceDestroy);
  r.Required({"cublasLtMatmulPreferenceSetAttribute"}, &api->MatmulPreferenceSetAttribute);
  r.Required({"cublasLtMatmulAlgoGetHeuristic"}, &api->MatmulAlgoGetHeuristic);
  r.Required({"cublasLtMatmul"}, &api->Matmul);
  return r.missing();
}

LazyPipLibrary<CublasLtApi>& CublasLtLibrary() {
  static LazyPipLibrary<CublasLtApi> lib(
      {"cuBLASLt (libcublasLt.so.13 or .12, which cublas_json modules need)",
       kCublasLtLibraryEnvVar,
       "cublasLt",
       {"libcublasLt.so.13", "libcublasLt.so.12"},
       "pip install \"tvm-runtime-cuda[cublas]\" (CUDA 13 drivers) or "
       "\"tvm-runtime-cuda[cublas-cu12]\" (CUDA 12 drivers)"},
      &ResolveCublasLtApi);
  return lib;
}

}  // namespace

const CublasLtApi& CublasLt() { return CublasLtLibrary().Get().api; }

std::string CublasLtStatus() { return CublasLtLibrary().Status(); }

void CheckCublas(cublasStatus_t status, const std::string& what) {
  CublasLtLibrary().Check(status, CUBLAS_STATUS_SUCCESS, "cuBLASLt", what,
                          &CublasLtApi::GetStatusString);
}

}  // namespace cuda
}  // namespace tvm_runtime
