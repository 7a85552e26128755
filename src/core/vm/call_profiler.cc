#include "call_profiler.h"

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/string.h>

#include "../device_registry.h"

namespace tvm_runtime {
namespace core {
namespace vm {

namespace ffi = ::tvm::ffi;

namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

CallProfiler::Category CallProfiler::CategoryOfPacked(const std::string& name) {
  // The KV cache's attention builtins are the model's attention: their time is the attention
  // kernels the model handed to the cache (rotary split, append, attention, merge) and a few
  // shape checks, so they count as kernels, not as runtime overhead.
  static const char* const kAttentionBuiltins[] = {
      "vm.builtin.attention_kv_cache_attention_with_fused_qkv",
      "vm.builtin.attention_kv_cache_self_attention",
      "vm.builtin.attention_kv_cache_cross_attention",
      "vm.builtin.attention_kv_cache_attention_with_shared_kv",
      "vm.builtin.attention_kv_cache_merge_attn_output_inplace",
  };
  for (const char* attention : kAttentionBuiltins) {
    if (name == attention) return kKernel;
  }
  // Kernels are the artifact's own functions; the runtime's builtins carry these prefixes.
  if (!StartsWith(name, "vm.") && !StartsWith(name, "relax.") && !StartsWith(name, "runtime.") &&
      !StartsWith(name, "tvm.") && !StartsWith(name, "ffi.")) {
    return kKernel;
  }
  if (name.find("alloc") != std::string::npos || name.find("kill") != std::string::npos) {
    return kAlloc;
  }
  if (name.find("copy") != std::string::npos || name.find("to_device") != std::string::npos) {
    return kCopy;
  }
  return kBuiltin;
}

DLDevice CallProfiler::DeviceOf(const ffi::AnyView* args, int32_t num_args) {
  DLDevice found{kDLCPU, 0};
  for (int32_t i = 0; i < num_args; ++i) {
    std::optional<DLTensor*> t = args[i].try_cast<DLTensor*>();
    if (!t.has_value() || *t == nullptr) continue;
    const DLDevice& dev = (*t)->device;
    if (dev.device_type != kDLCPU && dev.device_type != kDLCUDAHost &&
        dev.device_type != kDLROCMHost) {
      return dev;
    }
  }
  return found;
}

void CallProfiler::Synchronize(const DLDevice& device) {
  const TVMRuntimeDeviceAPI& api = RequireDevice(device.device_type);
  Check(api.stream_sync(api.self, device.device_id, nullptr));
}

ffi::Optional<ffi::Function> CallProfiler::TimerFor(const DLDevice& device) {
  auto it = timer_factories_.find(device.device_type);
  if (it == timer_factories_.end()) {
    it = timer_factories_
             .emplace(
                 device.device_type,
                 ffi::Function::GetGlobal("runtime.timer." + DeviceTypeName(device.device_type)))
             .first;
  }
  if (!it->second.has_value()) return std::nullopt;
  return (*it->second)(device).cast<ffi::Function>();
}

ffi::Array<ffi::Any> CallProfiler::Report(int64_t run_start_ns, int64_t total_ns,
                                          const std::vector<std::string>& func_names) const {
  ffi::Array<ffi::String> names;
  for (const std::string& n : func_names) names.push_back(ffi::String(n));
  std::vector<int64_t> records;
  records.reserve(events_.size() * kRecordFields);
  for (const Event& e : events_) {
    const int64_t fields[kRecordFields] = {e.func_index,
                                           e.category,
                                           e.device.device_type,
                                           e.device.device_id,
                                           e.start_ns - run_start_ns,
                                           e.wall_ns,
                                           e.device_ns,
                                           e.depth};
    records.insert(records.end(), fields, fields + kRecordFields);
  }
  ffi::Bytes packed(reinterpret_cast<const char*>(records.data()),
                    records.size() * sizeof(int64_t));
  return ffi::Array<ffi::Any>{ffi::Any(total_ns), ffi::Any(names), ffi::Any(packed)};
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
