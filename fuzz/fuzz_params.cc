/*
 * Fuzz target: params blobs (`runtime.LoadParams`, the format `tvm.runtime.load_param_dict`
 * reads).  A blob that loads is saved again and reloaded: the round trip must succeed.
 */
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/string.h>

#include <cstddef>
#include <cstdint>

#include "fuzz_runtime.h"

namespace {

::tvm::ffi::Function load_params, save_params;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tvmrt_fuzz::LoadRuntime({});
  load_params = tvmrt_fuzz::Global("runtime.LoadParams");
  save_params = tvmrt_fuzz::Global("runtime.SaveParams");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tvmrt_fuzz::ExpectHandled([&] {
    ::tvm::ffi::Bytes blob(reinterpret_cast<const char*>(data), size);
    ::tvm::ffi::Any params = load_params(blob);
    ::tvm::ffi::Any saved = save_params(params);
    load_params(saved);  // what we write, we read back
  });
  return 0;
}
