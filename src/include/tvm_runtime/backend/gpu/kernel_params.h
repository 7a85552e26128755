/*
 * The two ways GPU launch APIs take kernel parameters, built per launch from the packed
 * arguments of a TVM host call (kernel_args.h converts them):
 *   - KernelParamPointers: an array with one pointer per parameter, each pointing at its value
 *     (cuLaunchKernel's and hipModuleLaunchKernel's `kernelParams`);
 *   - PackedArgLayout: one buffer laid out like the kernel's argument struct, each value at an
 *     offset aligned to its size (the `extra` buffer of HIP_LAUNCH_PARAM_BUFFER_POINTER, which
 *     is how apache-tvm 0.27 launches ROCm kernels).
 * Both keep their storage on the stack for ordinary kernels (scratch_array.h).
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_KERNEL_PARAMS_H_
#define TVM_RUNTIME_BACKEND_GPU_KERNEL_PARAMS_H_

#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/gpu/kernel_args.h>
#include <tvm_runtime/backend/gpu/scratch_array.h>

#include <cstring>
#include <vector>

namespace tvm_runtime {
namespace backend {

class KernelParamPointers {
 public:
  /* `by_pointer[i]` (optional): parameter i is passed as the handle itself (CUDA's CUtensorMap
   * arguments), not as a pointer to a converted value. */
  KernelParamPointers(const KernelArgs& args, const TVMFFIAny* packed,
                      const std::vector<bool>* by_pointer = nullptr)
      : values_(args.size()), pointers_(args.size()) {
    args.Convert(packed, values_.data());
    for (size_t i = 0; i < args.size(); ++i) {
      // A narrowed 32-bit value sits at the start of its union, where the pointer points.
      bool direct = by_pointer != nullptr && (*by_pointer)[i];
      pointers_[i] = direct ? values_[i].v_handle : static_cast<void*>(&values_[i]);
    }
  }

  void** data() { return pointers_.data(); }

 private:
  ScratchArray<ArgValue> values_;
  ScratchArray<void*> pointers_;
};

/* Offsets of the kernel's parameters in its argument struct, computed once per kernel. */
class PackedArgLayout {
 public:
  PackedArgLayout() = default;
  explicit PackedArgLayout(const KernelArgs& args) {
    offsets_.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      size_t size = ArgSize(args.kind(i));
      size_ = (size_ + size - 1) / size * size;  // natural alignment: 4 or 8 bytes
      offsets_.push_back(size_);
      size_ += size;
    }
  }

  /* Bytes of the argument buffer. */
  size_t size() const { return size_; }
  size_t offset(size_t i) const { return offsets_[i]; }

  /* Writes the converted `values` of `args` into `out` (size() bytes, 8-byte aligned). */
  void Pack(const KernelArgs& args, const ArgValue* values, void* out) const {
    char* base = static_cast<char*>(out);
    for (size_t i = 0; i < offsets_.size(); ++i) {
      std::memcpy(base + offsets_[i], &values[i], ArgSize(args.kind(i)));
    }
  }

 private:
  std::vector<size_t> offsets_;
  size_t size_ = 0;
};

/* One launch's argument buffer, packed per `layout`. */
class PackedArgBuffer {
 public:
  PackedArgBuffer(const KernelArgs& args, const PackedArgLayout& layout, const TVMFFIAny* packed)
      : values_(args.size()), words_((layout.size() + 7) / 8), size_(layout.size()) {
    args.Convert(packed, values_.data());
    layout.Pack(args, values_.data(), words_.data());
  }

  void* data() { return words_.data(); }
  /* The launch API reads the size through a pointer, so it lives here. */
  size_t* size_ptr() { return &size_; }

 private:
  ScratchArray<ArgValue> values_;
  ScratchArray<uint64_t> words_;
  size_t size_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_KERNEL_PARAMS_H_
