/*
 * Per-kernel metadata of GPU device modules (apache-tvm 0.27 "FunctionInfo") and the common
 * payload prefix `str fmt; map<str, FunctionInfo> fmap` shared by the cuda/opencl/hip/metal/vulkan
 * module kinds.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_FUNCTION_INFO_H_
#define TVM_RUNTIME_BACKEND_GPU_FUNCTION_INFO_H_

#include <dlpack/dlpack.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/message_text.h>

#include <map>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace backend {

/* arg_extra_tags values */
enum class ArgExtraTag : int32_t { kNone = 0, kTensorMap = 1 };

struct FunctionInfo {
  std::string name;
  std::vector<DLDataType> arg_types;
  std::vector<std::string> launch_param_tags;
  std::vector<int32_t> arg_extra_tags;
};

inline FunctionInfo ReadFunctionInfo(BlobReader* r) {
  FunctionInfo info;
  info.name = r->ReadString();
  info.arg_types = r->ReadVector<DLDataType>();
  info.launch_param_tags = r->ReadStringVector();
  info.arg_extra_tags = r->ReadVector<int32_t>();
  if (!info.arg_extra_tags.empty() && info.arg_extra_tags.size() != info.arg_types.size()) {
    r->Fail("kernel '" + Printable(info.name) + "' has " +
            std::to_string(info.arg_extra_tags.size()) + " extra tags for " +
            std::to_string(info.arg_types.size()) + " arguments");
  }
  return info;
}

/* The `fmt` + `fmap` prefix of every GPU module payload. */
struct DeviceModuleHeader {
  std::string fmt;
  std::map<std::string, FunctionInfo> fmap;
};

inline DeviceModuleHeader ReadDeviceModuleHeader(BlobReader* r) {
  DeviceModuleHeader h;
  h.fmt = r->ReadString();
  uint64_t n = r->ReadCount(/*min bytes per entry=*/8, "the function table");
  for (uint64_t i = 0; i < n; ++i) {
    std::string key = r->ReadString();
    h.fmap[key] = ReadFunctionInfo(r);
  }
  return h;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_FUNCTION_INFO_H_
