/*
 * The non-paged attention KV cache that apache-tvm 0.27 still registers for older Relax models
 * (vm.builtin.attention_kv_cache_{create,update,append,view,window_override,
 * window_override_with_sinks,array_popn,array_clear}): one growing tensor per layer whose rows
 * are tokens.  The window variants keep at most `max_cache_size` rows and, once full, write new
 * rows over the oldest ones after the first `num_attention_sinks` rows (a ring buffer).
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "device_tensors.h"
#include "lm_init.h"

namespace tvm_runtime {
namespace core {
namespace lm {

namespace {

class LegacyKVCacheObj : public ffi::Object {
 public:
  ffi::Tensor data;        // (capacity, *row_shape)
  int64_t fill_count = 0;  // rows holding tokens
  int64_t window_pos = 0;  // next row the window variants write

  void Append(const ffi::Tensor& value, const char* who) {
    CheckRows(value, who);
    Reserve(fill_count + value.size(0));
    CopyRows(value, 0, fill_count, value.size(0));
    fill_count += value.size(0);
  }

  void Update(const ffi::Tensor& value) {
    const char* who = "vm.builtin.attention_kv_cache_update";
    CheckRows(value, who);
    if (value.size(0) != fill_count) {
      backend::ThrowError("ValueError", std::string(who) + ": the value has " +
                                            std::to_string(value.size(0)) +
                                            " rows, the cache holds " + std::to_string(fill_count));
    }
    CopyRows(value, 0, 0, value.size(0));
  }

  void WindowOverride(const ffi::Tensor& value, int64_t max_size, int64_t sinks) {
    const char* who = "vm.builtin.attention_kv_cache_window_override";
    CheckRows(value, who);
    int64_t n = value.size(0);
    if (sinks < 0 || n > max_size - sinks) {
      backend::ThrowError("ValueError", std::string(who) + ": " + std::to_string(n) +
                                            " new rows do not fit a window of " +
                                            std::to_string(max_size) + " rows with " +
                                            std::to_string(sinks) + " attention sinks");
    }
    // (apache-tvm grows only while the window is not full; growing to the window size when it
    // is covers the case where it would write past the tensor.)
    Reserve(std::min(fill_count + n, max_size));
    int64_t head = std::min(n, max_size - window_pos);  // rows that fit before the window's end
    if (head > 0) CopyRows(value, 0, window_pos, head);
    fill_count = std::min(fill_count + n, max_size);
    window_pos = std::min(window_pos + n, max_size);
    if (head < n) {
      // Wrap around: the rest overwrites the oldest rows after the sinks.
      CopyRows(value, head, sinks, n - head);
      window_pos = sinks + n - head;
    }
  }

  ffi::Tensor View(const ffi::Optional<ffi::Shape>& shape) {
    std::vector<int64_t> dims = {fill_count};
    for (int i = 1; i < data.ndim(); ++i) dims.push_back(data.size(i));
    if (shape.has_value()) {
      const ffi::Shape& want = shape.value();
      bool same = want.size() == dims.size() && std::equal(dims.begin(), dims.end(), want.begin());
      if (!same) {
        backend::ThrowError("ValueError",
                            "vm.builtin.attention_kv_cache_view: the requested shape does not "
                            "match the cache (" +
                                std::to_string(fill_count) + " filled rows)");
      }
    }
    return LeadingView(data, ffi::Shape(dims));
  }

  void PopN(int64_t n) {
    if (n < 0 || n > fill_count) {
      backend::ThrowError("ValueError", "vm.builtin.attention_kv_cache_array_popn: cannot pop " +
                                            std::to_string(n) + " rows from a cache holding " +
                                            std::to_string(fill_count));
    }
    fill_count -= n;
  }

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("relax.vm.AttentionKVCacheLegacy", LegacyKVCacheObj,
                                    ffi::Object);

 private:
  int64_t RowBytes(const ffi::Tensor& t) const {
    int64_t n = (t.dtype().bits * t.dtype().lanes + 7) / 8;
    for (int i = 1; i < t.ndim(); ++i) n *= t.size(i);
    return n;
  }

  void CheckRows(const ffi::Tensor& value, const char* who) const {
    bool ok = value.ndim() == data.ndim() && value.dtype() == data.dtype() && value.IsContiguous();
    for (int i = 1; ok && i < data.ndim(); ++i) ok = value.size(i) == data.size(i);
    if (!ok) {
      backend::ThrowError("ValueError", std::string(who) + ": the value must be a contiguous " +
                                            std::string(ffi::DLDataTypeToString(data.dtype())) +
                                            " tensor whose rows have the cache's row shape");
    }
  }

  /* Capacity doubles until `rows` fit; the filled rows move to the new tensor. */
  void Reserve(int64_t rows) {
    int64_t capacity = std::max<int64_t>(data.size(0), 1);
    if (rows <= data.size(0)) return;
    while (capacity < rows) capacity *= 2;
    std::vector<int64_t> dims(data.shape().begin(), data.shape().end());
    dims[0] = capacity;
    ffi::Tensor grown = AllocTensor(ffi::Shape(dims), data.dtype(), data.device());
    ffi::Tensor old = data;
    data = grown;
    CopyRows(old, 0, 0, old.size(0));
  }

  void CopyRows(const ffi::Tensor& src, int64_t src_row, int64_t dst_row, int64_t rows) {
    if (rows <= 0) return;
    if (src_row + rows > src.size(0) || dst_row + rows > data.size(0)) {
      backend::ThrowError("ValueError", "attention KV cache: rows [" + std::to_string(dst_row) +
                                            ", " + std::to_string(dst_row + rows) +
                                            ") are outside the cache of " +
                                            std::to_string(data.size(0)) + " rows");
    }
    int64_t bytes = RowBytes(data);
    std::vector<int64_t> dims(data.shape().begin(), data.shape().end());
    dims[0] = rows;
    DLTensor from = *src.GetDLTensorPtr(), to = *data.GetDLTensorPtr();
    from.byte_offset += static_cast<uint64_t>(src_row * bytes);
    to.byte_offset += static_cast<uint64_t>(dst_row * bytes);
    from.shape = to.shape = dims.data();
    from.strides = to.strides = nullptr;
    CopyTensor(&from, &to, CopyWait::kQueued);
  }
};

class LegacyKVCache : public ffi::ObjectRef {
 public:
  explicit LegacyKVCache(ffi::ObjectPtr<LegacyKVCacheObj> n) : ffi::ObjectRef(std::move(n)) {}
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(LegacyKVCache, ffi::ObjectRef, LegacyKVCacheObj);
};

LegacyKVCache Create(ffi::Tensor init, ffi::Shape reserve, int64_t init_fill_count) {
  if (reserve.size() != static_cast<size_t>(init.ndim()) || reserve.size() == 0) {
    backend::ThrowError("ValueError",
                        "vm.builtin.attention_kv_cache_create: the reserved shape must have the "
                        "rank of the initial data");
  }
  auto n = ffi::make_object<LegacyKVCacheObj>();
  n->data = AllocTensor(reserve, init.dtype(), init.device());
  n->Append(init, "vm.builtin.attention_kv_cache_create");
  if (init_fill_count >= 0) {
    n->fill_count = init_fill_count;
    n->window_pos = init_fill_count;
  }
  return LegacyKVCache(std::move(n));
}

}  // namespace

void RegisterLegacyKVCacheBuiltins() {
  LegacyKVCacheObj::_GetOrAllocRuntimeTypeIndex();
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("vm.builtin.attention_kv_cache_create", Create)
      .def("vm.builtin.attention_kv_cache_update",
           [](LegacyKVCache c, ffi::Tensor value) {
             c->Update(value);
             return c;
           })
      .def("vm.builtin.attention_kv_cache_append",
           [](LegacyKVCache c, ffi::Tensor value) {
             c->Append(value, "vm.builtin.attention_kv_cache_append");
             return c;
           })
      .def("vm.builtin.attention_kv_cache_window_override",
           [](LegacyKVCache c, ffi::Tensor value, int64_t max_size) {
             c->WindowOverride(value, max_size, 0);
             return c;
           })
      .def("vm.builtin.attention_kv_cache_window_override_with_sinks",
           [](LegacyKVCache c, ffi::Tensor value, int64_t max_size, int64_t sinks) {
             c->WindowOverride(value, max_size, sinks);
             return c;
           })
      .def_packed("vm.builtin.attention_kv_cache_view",
                  [](ffi::PackedArgs args, ffi::Any* rv) {
                    if (args.size() != 1 && args.size() != 2) {
                      backend::ThrowError("TypeError",
                                          "vm.builtin.attention_kv_cache_view(cache[, shape]) "
                                          "takes 1 or 2 arguments, got " +
                                              std::to_string(args.size()));
                    }
                    ffi::Optional<ffi::Shape> shape;
                    if (args.size() == 2) shape = args[1].cast<ffi::Shape>();
                    *rv = args[0].cast<LegacyKVCache>()->View(shape);
                  })
      .def("vm.builtin.attention_kv_cache_array_popn",
           [](ffi::Array<LegacyKVCache> caches, int64_t n) {
             for (const LegacyKVCache& c : caches) c->PopN(n);
           })
      .def("vm.builtin.attention_kv_cache_array_clear", [](ffi::Array<LegacyKVCache> caches) {
        for (const LegacyKVCache& c : caches) {
          c->fill_count = 0;
          c->window_pos = 0;
        }
      });
}

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime
