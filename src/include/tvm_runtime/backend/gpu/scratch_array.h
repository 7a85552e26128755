/*
 * Per-launch scratch storage (converted kernel arguments, parameter pointer arrays): on the
 * stack for the common case, on the heap only for kernels with unusually many parameters, so
 * the launch path does not allocate.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_SCRATCH_ARRAY_H_
#define TVM_RUNTIME_BACKEND_GPU_SCRATCH_ARRAY_H_

#include <cstddef>
#include <memory>

namespace tvm_runtime {
namespace backend {

template <typename T, size_t kInline = 32>
class ScratchArray {
 public:
  explicit ScratchArray(size_t n) : data_(inline_) {
    if (n > kInline) {
      heap_.reset(new T[n]);
      data_ = heap_.get();
    }
  }
  ScratchArray(const ScratchArray&) = delete;
  ScratchArray& operator=(const ScratchArray&) = delete;

  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  T inline_[kInline];
  std::unique_ptr<T[]> heap_;
  T* data_;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_SCRATCH_ARRAY_H_
