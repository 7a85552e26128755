/*
 * Fuzz target: a GPU backend's module payload (`ffi.Module.load_from_bytes.<kind>`), compiled
 * once per kind with -DFUZZ_MODULE_KIND="opencl" / "vulkan" / "cuda" / "webgpu" / "hip".  A payload
 * that loads is serialized again and reloaded, and every kernel of its function table is looked up,
 * which builds its argument signature and launch plan (no device is touched: the drivers are opened
 * at first launch).
 */
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/gpu/function_info.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_runtime.h"

#ifndef FUZZ_MODULE_KIND
#error "compile with -DFUZZ_MODULE_KIND=\"opencl\" (or vulkan, cuda, webgpu, hip)"
#endif
// The backend wheel that serves the kind, where its name differs (ROCm serves `hip`).
#ifndef FUZZ_BACKEND
#define FUZZ_BACKEND FUZZ_MODULE_KIND
#endif

namespace {

namespace ffi = ::tvm::ffi;

ffi::Function load_module;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tvmrt_fuzz::LoadRuntime({FUZZ_BACKEND});
  load_module = tvmrt_fuzz::Global("ffi.Module.load_from_bytes." FUZZ_MODULE_KIND);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tvmrt_fuzz::ExpectHandled([&] {
    ffi::Bytes payload(reinterpret_cast<const char*>(data), size);
    ffi::Module mod = load_module(payload).cast<ffi::Module>();
    load_module(mod->SaveToBytes());
    // The payload loaded, so its header is valid: read the kernel names with the same reader.
    tvm_runtime::backend::BlobReader reader(payload.data(), payload.size(), FUZZ_MODULE_KIND);
    for (const auto& entry : tvm_runtime::backend::ReadDeviceModuleHeader(&reader).fmap) {
      tvmrt_fuzz::ExpectHandled([&] { mod->GetFunction(entry.first); });
    }
  });
  return 0;
}
