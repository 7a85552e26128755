/*
 * Entry points of libtvm_runtime_rocm.so.  Registration runs when the Python hook calls
 * TVMRuntimeBackendRegister, never in a static constructor, and does not touch HIP: the
 * runtime library is opened on first device use.
 */
#include <tvm_runtime/backend/backend_entry.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/gpu/device_module.h>

#include <string>

#include "rocm_device_api.h"
#include "rocm_globals.h"
#include "rocm_module.h"
#include "rocm_rccl.h"
#include "rocm_runtime.h"

namespace tvm_runtime {
namespace rocm {

void RegisterRocmBackend() {
  // Leaked: the core keeps the tables (and these pointers) for the life of the process.
  static RocmDeviceAPI* device_api = new RocmDeviceAPI();
  static RocmHostDeviceAPI* host_api = new RocmHostDeviceAPI();
  backend::RegisterDeviceAPI(backend::MakeDeviceAPITable(device_api, kDeviceTypeROCM, "rocm"));
  backend::RegisterDeviceAPI(
      backend::MakeDeviceAPITable(host_api, kDeviceTypeROCMHost, "rocm_host"));
  // apache-tvm 0.27 writes kind "hip"; "hsaco" is the other name its runtime loads them by.
  // Both replace the core's placeholders that ask the user to install this wheel.
  for (const char* kind : {"hip", "hsaco"}) {
    backend::RegisterModuleLoader(
        kind, [](const std::string& payload) { return LoadRocmModule(payload); });
  }
  RegisterDiagnosticGlobals();
  RegisterEventGlobals();
  RegisterRcclGlobals();  // Disco's runtime.disco.rccl.*
}

}  // namespace rocm
}  // namespace tvm_runtime

TVM_RUNTIME_DEFINE_BACKEND_ENTRY(::tvm_runtime::rocm::RegisterRocmBackend)
