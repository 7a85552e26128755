/*
 * Entry points of libtvm_runtime_opencl.so.  Registration runs when the Python hook calls
 * TVMRuntimeBackendRegister, never in a static constructor, and does not touch OpenCL: the ICD
 * loader is opened on first device use.
 */
#include <tvm_runtime/backend/backend_entry.h>
#include <tvm_runtime/backend/cache/persistent_cache.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/device_module.h>

#include <string>

#include "opencl_device_api.h"
#include "opencl_module.h"
#include "opencl_program_cache.h"
#include "opencl_runtime.h"
#include "opencl_timer.h"

namespace tvm_runtime {
namespace opencl {

void RegisterOpenCLBackend() {
  // Leaked: the core keeps the table (and this pointer) for the life of the process.
  static OpenCLDeviceAPI* device_api = new OpenCLDeviceAPI();
  backend::RegisterDeviceAPI(backend::MakeDeviceAPITable(device_api, kDeviceTypeOpenCL, "opencl"));
  backend::RegisterModuleLoader(
      "opencl", [](const std::string& payload) { return LoadOpenCLModule(payload); });
  backend::RegisterCacheInfo("opencl", [] { return ProgramCache(); });
  RegisterOpenCLTimer();
}

}  // namespace opencl
}  // namespace tvm_runtime

TVM_RUNTIME_DEFINE_BACKEND_ENTRY(::tvm_runtime::opencl::RegisterOpenCLBackend)
