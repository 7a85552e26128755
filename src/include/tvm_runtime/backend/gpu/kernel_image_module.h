/*
 * Skeleton of device modules whose code is one binary image loaded once per device (CUDA's
 * CUmodule, HIP's hipModule_t) on top of DeviceModuleBase: the payload `str fmt; map fmap;
 * bytes code`, the kernels by index in function-table order, the per-device image created on
 * first launch, the lookup of every kernel in a freshly loaded image, and the description of
 * the function table that the backends' `describe_module` globals return.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_KERNEL_IMAGE_MODULE_H_
#define TVM_RUNTIME_BACKEND_GPU_KERNEL_IMAGE_MODULE_H_

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/gpu/device_module.h>
#include <tvm_runtime/backend/gpu/per_device_cache.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace backend {

/* A parsed `str fmt; map<str, FunctionInfo> fmap; bytes code` payload. */
struct KernelImagePayload {
  DeviceModuleHeader header;
  std::string code;
};

/* Parses the payload of a `kind` module; ValueError when it is truncated, has trailing bytes
 * or holds no code. */
inline KernelImagePayload ParseKernelImagePayload(const std::string& payload,
                                                  const std::string& kind) {
  BlobReader reader(payload.data(), payload.size(), kind);
  KernelImagePayload out;
  out.header = ReadDeviceModuleHeader(&reader);
  out.code = reader.ReadString();
  reader.ExpectEnd();
  if (out.code.empty()) reader.Fail("the module holds no code");
  return out;
}

template <typename Image>
class KernelImageModule : public DeviceModuleBase {
 public:
  KernelImageModule(std::string kind, std::string payload, KernelImagePayload parsed)
      : DeviceModuleBase(std::move(kind), std::move(payload), std::move(parsed.header)),
        code_(std::move(parsed.code)) {
    for (const auto& entry : header().fmap) kernel_names_.push_back(entry.second.name);
  }

  /* The image on `device_id`, loaded on first use. Hot path: one acquire load afterwards. */
  Image* GetImage(int32_t device_id) {
    Image* image = images_.Peek(device_id);
    return image != nullptr ? image : LoadImage(device_id);
  }

  const std::string& fmt() const { return header().fmt; }
  const std::string& code() const { return code_; }
  size_t num_kernels() const { return kernel_names_.size(); }
  const std::string& kernel_name(size_t index) const { return kernel_names_[index]; }
  const std::vector<std::string>& kernel_names() const { return kernel_names_; }

  /* Index of the function-table entry `key` (a key GetFunction found). */
  size_t KernelIndex(const std::string& key) const {
    size_t index = 0;
    for (const auto& entry : header().fmap) {
      if (entry.first == key) break;
      ++index;
    }
    return index;
  }

 protected:
  /* Slow path of GetImage; a backend may override it to prepare outside the per-device lock,
   * then call LoadOnce. */
  virtual Image* LoadImage(int32_t device_id) { return LoadOnce(device_id); }
  Image* LoadOnce(int32_t device_id) {
    return images_.Get(device_id, [&] { return Load(device_id); });
  }
  /* Loads the image on `device_id`; throws the reason (nothing is cached then). */
  virtual std::unique_ptr<Image> Load(int32_t device_id) = 0;

 private:
  std::string code_;
  std::vector<std::string> kernel_names_;  // index -> name, in function-table order
  PerDeviceCache<Image> images_;
};

/* Looks every kernel up in a freshly loaded image.  `lookup(const std::string& name, Fn* out)`
 * returns false when the image does not define it (nullptr then: reported when that kernel is
 * launched, not for the whole module) and throws on any other error. */
template <typename Fn, typename Lookup>
std::vector<Fn> ResolveKernels(const std::vector<std::string>& names, Lookup&& lookup) {
  std::vector<Fn> out(names.size(), nullptr);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!lookup(names[i], &out[i])) out[i] = nullptr;
  }
  return out;
}

/* The launch-time error for a kernel ResolveKernels did not find; `where` names the device. */
[[noreturn]] inline void ThrowKernelNotInImage(const std::string& kernel,
                                               const std::string& where) {
  ThrowError("RuntimeError", "kernel '" + kernel +
                                 "' is listed in the module's function table but its image on " +
                                 where + " does not define it; the artifact is inconsistent");
}

/* {"fmt": str, "kernels": {key: {"name", "arg_types": [dtype str], "launch_param_tags": [str],
 * "arg_extra_tags": [int]}}}, for diagnostics and tests. */
inline ::tvm::ffi::Map<::tvm::ffi::String, ::tvm::ffi::Any> DescribeFunctionTable(
    const DeviceModuleHeader& header) {
  using ::tvm::ffi::Any;
  using ::tvm::ffi::Array;
  using ::tvm::ffi::Map;
  using ::tvm::ffi::String;
  Map<String, Any> kernels;
  for (const auto& entry : header.fmap) {
    const FunctionInfo& info = entry.second;
    Array<String> arg_types;
    for (DLDataType t : info.arg_types) arg_types.push_back(::tvm::ffi::DLDataTypeToString(t));
    Array<String> tags;
    for (const std::string& tag : info.launch_param_tags) tags.push_back(tag);
    Array<int64_t> extra;
    for (int32_t tag : info.arg_extra_tags) extra.push_back(tag);
    Map<String, Any> k;
    k.Set("name", String(info.name));
    k.Set("arg_types", arg_types);
    k.Set("launch_param_tags", tags);
    k.Set("arg_extra_tags", extra);
    kernels.Set(entry.first, k);
  }
  Map<String, Any> out;
  out.Set("fmt", String(header.fmt));
  out.Set("kernels", kernels);
  return out;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_KERNEL_IMAGE_MODULE_H_
