#include "rocm_globals.h"

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/global_function.h>

#include <string>

#include "hip_library.h"
#include "rocm_module.h"
#include "rocm_runtime.h"

namespace tvm_runtime {
namespace rocm {

namespace {

using ::tvm::ffi::Any;
using ::tvm::ffi::Array;
using ::tvm::ffi::Map;
using ::tvm::ffi::String;

Map<String, Any> DriverInfo() {
  RocmRuntime& rt = RocmRuntime::Global();
  Map<String, Any> out;
  out.Set("device_count", static_cast<int64_t>(rt.NumDevices()));
  out.Set("status", String(rt.Status()));
  out.Set("runtime_version", static_cast<int64_t>(rt.RuntimeVersion()));
  out.Set("driver_version", static_cast<int64_t>(rt.DriverVersion()));
  out.Set("library", String(GetHipLibrary().path));
  Array<String> candidates;
  for (const std::string& c : HipLibraryCandidates()) candidates.push_back(c);
  out.Set("candidates", candidates);
  Array<String> archs;
  for (int i = 0; i < rt.NumDevices(); ++i) archs.push_back(rt.Device(i).gcn_arch);
  out.Set("gcn_archs", archs);
  return out;
}

}  // namespace

void RegisterDiagnosticGlobals() {
  auto name = [](const char* what) { return backend::PrivateGlobalName("rocm", what); };
  backend::SetGlobalFunction(name("describe_module"),
                             [](const ::tvm::ffi::Module& mod) { return DescribeRocmModule(mod); });
  backend::SetGlobalFunction(name("describe_code_object"), [](const ::tvm::ffi::Bytes& image) {
    return DescribeCodeObject(std::string(image.data(), image.size()));
  });
  backend::SetGlobalFunction(name("driver_info"), DriverInfo);
}

}  // namespace rocm
}  // namespace tvm_runtime
