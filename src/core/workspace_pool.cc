/*
 * TVMBackendAllocWorkspace / TVMBackendFreeWorkspace: temporary buffers for compiled kernels.
 *
 * Compiled code allocates and frees workspaces in LIFO order within one call, often on every
 * call, so each (thread, device) keeps a small pool of page-rounded blocks and reuses them.
 * Backends may serve workspaces themselves (the table's alloc_workspace); otherwise the pool sits
 * on top of the backend's alloc_data/free_data.  Pools are per thread; each has a lock only so
 * that ReleaseIdleWorkspaces, from another thread, can take back the blocks no kernel is using
 * (uncontended otherwise: a few nanoseconds per workspace).
 */
#include "workspace_pool.h"

#include <tvm_runtime/c_api.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device_registry.h"

namespace tvm_runtime {
namespace core {
namespace {

constexpr uint64_t kPageSize = 4096;

class WorkspacePool;

/* The CPU pools of every live thread, for ReleaseIdleWorkspaces.  Device pools stay out: their
 * drivers may want frees from the thread that allocated. */
struct LivePools {
  std::mutex mu;
  std::vector<WorkspacePool*> pools;
};

LivePools& CpuPools() {
  static LivePools* live = new LivePools();  // leaked: threads may exit after static destructors
  return *live;
}

class WorkspacePool {
 public:
  WorkspacePool(const TVMRuntimeDeviceAPI* api, int device_type, int device_id)
      : api_(api), device_id_(device_id), listed_(device_type == kDLCPU) {
    if (listed_) {
      LivePools& live = CpuPools();
      std::lock_guard<std::mutex> lock(live.mu);
      live.pools.push_back(this);
    }
  }

  ~WorkspacePool() {
    if (listed_) {
      LivePools& live = CpuPools();
      std::lock_guard<std::mutex> lock(live.mu);
      live.pools.erase(std::find(live.pools.begin(), live.pools.end(), this));
    }
    for (const Block& b : free_) Release(b);
    for (const Block& b : in_use_) Release(b);
  }

  /* Frees the blocks not in use; returns their bytes. */
  uint64_t ReleaseFree() {
    std::vector<Block> blocks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocks.swap(free_);
    }
    uint64_t bytes = 0;
    for (const Block& b : blocks) {
      Release(b);
      bytes += b.size;
    }
    return bytes;
  }

  void* Alloc(uint64_t nbytes, DLDataType hint) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t size = (std::max<uint64_t>(nbytes, 1) + kPageSize - 1) / kPageSize * kPageSize;
    // Smallest free block that fits (free_ is sorted by size).
    auto it = std::lower_bound(free_.begin(), free_.end(), size,
                               [](const Block& b, uint64_t s) { return b.size < s; });
    Block block;
    if (it != free_.end()) {
      block = *it;
      free_.erase(it);
    } else {
      block.size = size;
      Check(api_->alloc_data(api_->self, device_id_, size, TVM_RUNTIME_ALLOC_ALIGNMENT, hint,
                             &block.data));
    }
    in_use_.push_back(block);
    return block.data;
  }

  bool Free(void* data) {
    std::lock_guard<std::mutex> lock(mu_);
    // LIFO is the common case, so search from the back.
    for (size_t i = in_use_.size(); i-- > 0;) {
      if (in_use_[i].data == data) {
        Block block = in_use_[i];
        in_use_.erase(in_use_.begin() + static_cast<std::ptrdiff_t>(i));
        auto pos = std::lower_bound(free_.begin(), free_.end(), block.size,
                                    [](const Block& b, uint64_t s) { return b.size < s; });
        free_.insert(pos, block);
        return true;
      }
    }
    return false;
  }

  const TVMRuntimeDeviceAPI* api() const { return api_; }

 private:
  struct Block {
    void* data = nullptr;
    uint64_t size = 0;
  };

  void Release(const Block& b) {
    // Thread or process teardown: a driver that already shut down may refuse; nothing to do.
    if (api_->free_data(api_->self, device_id_, b.data) != 0) {
      TVMFFIObjectHandle ignored = nullptr;
      TVMFFIErrorMoveFromRaised(&ignored);
      if (ignored != nullptr) TVMFFIObjectDecRef(ignored);
    }
  }

  const TVMRuntimeDeviceAPI* api_;
  int device_id_;
  bool listed_;
  std::mutex mu_;
  std::vector<Block> free_;
  std::vector<Block> in_use_;
};

struct PoolEntry {
  int device_type;
  int device_id;
  std::unique_ptr<WorkspacePool> pool;
};

WorkspacePool* ThreadPoolFor(const TVMRuntimeDeviceAPI* api, int device_type, int device_id) {
  thread_local std::vector<PoolEntry> pools;
  for (PoolEntry& e : pools) {
    // A backend re-registered with a new table gets a fresh pool.
    if (e.device_type == device_type && e.device_id == device_id && e.pool->api() == api) {
      return e.pool.get();
    }
  }
  pools.push_back(
      {device_type, device_id, std::make_unique<WorkspacePool>(api, device_type, device_id)});
  return pools.back().pool.get();
}

}  // namespace

uint64_t ReleaseIdleWorkspaces() {
  LivePools& live = CpuPools();
  std::lock_guard<std::mutex> lock(live.mu);
  uint64_t bytes = 0;
  for (WorkspacePool* pool : live.pools) bytes += pool->ReleaseFree();
  return bytes;
}

}  // namespace core
}  // namespace tvm_runtime

extern "C" {

TVM_RUNTIME_DLL void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                                               int dtype_code_hint, int dtype_bits_hint) {
  using namespace tvm_runtime::core;
  void* out = nullptr;
  int rc = tvm_runtime::backend::GuardCall([&] {
    const TVMRuntimeDeviceAPI& api = RequireDevice(device_type);
    DLDataType hint{static_cast<uint8_t>(dtype_code_hint), static_cast<uint8_t>(dtype_bits_hint),
                    1};
    if (api.alloc_workspace != nullptr) {
      Check(api.alloc_workspace(api.self, device_id, nbytes, hint, &out));
    } else {
      out = ThreadPoolFor(&api, device_type, device_id)->Alloc(nbytes, hint);
    }
  });
  // Compiled code turns NULL into "return -1"; the error raised above becomes the message.
  return rc == 0 ? out : nullptr;
}

TVM_RUNTIME_DLL int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  using namespace tvm_runtime::core;
  return tvm_runtime::backend::GuardCall([&] {
    const TVMRuntimeDeviceAPI& api = RequireDevice(device_type);
    if (api.free_workspace != nullptr) {
      Check(api.free_workspace(api.self, device_id, ptr));
    } else if (!ThreadPoolFor(&api, device_type, device_id)->Free(ptr)) {
      tvm_runtime::backend::ThrowError(
          "RuntimeError", "TVMBackendFreeWorkspace: pointer was not allocated as a workspace of " +
                              DeviceTypeName(device_type) + ":" + std::to_string(device_id) +
                              " on this thread");
    }
  });
}

}  // extern "C"
