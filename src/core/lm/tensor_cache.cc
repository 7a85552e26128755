/*
 * The tensor cache and its builtins (apache-tvm 0.27 names and signatures):
 *   vm.builtin.tensor_cache.load(String path, int device_type, int device_id)
 *       loads every record of the sharded cache at `path` (tensor_cache_format.h) onto that
 *       device, replacing entries of the same name
 *   vm.builtin.tensor_cache.get(String name) -> Tensor or None
 *   vm.builtin.tensor_cache.update(String name, Tensor | DLTensor* value[, bool override=False])
 *       a borrowed DLTensor* (what an RPC client passes) is copied into a new tensor
 *   vm.builtin.tensor_cache.remove(String name)       vm.builtin.tensor_cache.clear()
 */
#include "tensor_cache.h"

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../ffi_names.h"
#include "../tensor_ops.h"
#include "lm_init.h"
#include "tensor_cache_format.h"

namespace tvm_runtime {
namespace core {
namespace lm {
namespace {

struct Store {
  std::mutex mutex;
  std::unordered_map<std::string, ffi::Tensor> tensors;
};

// Never destroyed: device tensors must not be freed from a static destructor, when the backend
// drivers may already be unloaded.
Store& GlobalStore() {
  static Store* store = new Store();
  return *store;
}

void Load(const ffi::String& path, int device_type, int device_id) {
  DLDevice device{static_cast<DLDeviceType>(device_type), device_id};
  std::string shard_dir;
  std::vector<TensorCacheShard> shards = ReadTensorCacheIndex(std::string(path), &shard_dir);
  std::vector<std::pair<std::string, ffi::Tensor>> loaded;
  for (const TensorCacheShard& shard : shards) {
    std::vector<ffi::Tensor> tensors = LoadTensorCacheShard(shard_dir, shard, device);
    for (size_t i = 0; i < tensors.size(); ++i) {
      loaded.emplace_back(shard.records[i].name, std::move(tensors[i]));
    }
  }
  TensorCacheInsert(std::move(loaded), /*overwrite=*/true);
}

void Update(PackedArgs args, Any* rv) {
  if (args.size() != 2 && args.size() != 3) {
    backend::ThrowError("TypeError",
                        "vm.builtin.tensor_cache.update(name, tensor[, override]) takes 2 or 3 "
                        "arguments, got " +
                            std::to_string(args.size()));
  }
  auto name = args[0].try_cast<ffi::String>();
  if (!name.has_value()) {
    backend::ThrowError("TypeError", "vm.builtin.tensor_cache.update: name must be a string, got " +
                                         args[0].GetTypeKey());
  }
  bool overwrite = args.size() == 3 && args[2].cast<bool>();
  ffi::Tensor value;
  if (auto t = args[1].as<ffi::Tensor>()) {
    value = *t;
  } else if (auto dl = args[1].try_cast<DLTensor*>()) {
    // Nobody owns a borrowed DLTensor beyond this call: keep a copy.
    value = AllocTensor(ffi::ShapeView((*dl)->shape, (*dl)->ndim), (*dl)->dtype, (*dl)->device);
    CopyTensor(*dl, value.GetDLTensorPtr(), CopyWait::kFinished);
  } else {
    backend::ThrowError(
        "TypeError",
        "vm.builtin.tensor_cache.update: value must be a Tensor, got " + args[1].GetTypeKey());
  }
  TensorCacheInsert({{std::string(*name), value}}, overwrite);
}

}  // namespace

ffi::Optional<ffi::Tensor> TensorCacheGet(const std::string& name) {
  Store& store = GlobalStore();
  std::lock_guard<std::mutex> lock(store.mutex);
  auto it = store.tensors.find(name);
  if (it == store.tensors.end()) return std::nullopt;
  return it->second;
}

void TensorCacheInsert(std::vector<std::pair<std::string, ffi::Tensor>> entries, bool overwrite) {
  Store& store = GlobalStore();
  std::lock_guard<std::mutex> lock(store.mutex);
  if (!overwrite) {
    for (const auto& e : entries) {
      if (store.tensors.count(e.first) != 0) {
        backend::ThrowError("ValueError", "'" + e.first +
                                              "' is already in the tensor cache; pass "
                                              "override=True to replace it");
      }
    }
  }
  for (auto& e : entries) store.tensors[e.first] = std::move(e.second);
}

size_t TensorCacheSize() {
  Store& store = GlobalStore();
  std::lock_guard<std::mutex> lock(store.mutex);
  return store.tensors.size();
}

void RegisterTensorCacheBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("vm.builtin.tensor_cache.load", Load)
      .def("vm.builtin.tensor_cache.get",
           [](const ffi::String& name) { return TensorCacheGet(std::string(name)); })
      .def_packed("vm.builtin.tensor_cache.update", Update)
      .def("vm.builtin.tensor_cache.remove",
           [](const ffi::String& name) {
             Store& store = GlobalStore();
             std::lock_guard<std::mutex> lock(store.mutex);
             store.tensors.erase(std::string(name));
           })
      .def("vm.builtin.tensor_cache.clear", [] {
        // Release outside the lock: freeing device memory may take a while.
        std::unordered_map<std::string, ffi::Tensor> old;
        {
          Store& store = GlobalStore();
          std::lock_guard<std::mutex> lock(store.mutex);
          old.swap(store.tensors);
        }
      });
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
