#include "session_state.h"

#include <tvm_runtime/backend/error.h>

#include <cstdio>
#include <string>
#include <utility>

namespace tvm_runtime {
namespace core {
namespace rpc {

namespace ffi = ::tvm::ffi;

namespace {

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

uint64_t SessionStateObj::Put(ffi::Any value) {
  uint64_t handle = NextHandle();
  objects_.emplace(handle, std::move(value));
  return handle;
}

const ffi::Any& SessionStateObj::Get(uint64_t handle, const char* what) const {
  auto it = objects_.find(handle);
  if (it == objects_.end()) {
    backend::ThrowError("ValueError", std::string("unknown remote ") + what + " handle " +
                                          Hex(handle) + " (already freed?)");
  }
  return it->second;
}

uint64_t SessionStateObj::PutTensor(ffi::Tensor tensor) {
  uint64_t data = NextHandle();
  buffers_.emplace(data, std::move(tensor));
  return data;
}

const ffi::Tensor& SessionStateObj::TensorOf(uint64_t data) const {
  auto it = buffers_.find(data);
  if (it == buffers_.end()) {
    backend::ThrowError("ValueError",
                        "unknown remote data handle " + Hex(data) + " (freed or never allocated)");
  }
  return it->second;
}

void SessionStateObj::PutReturnedTensor(ffi::Tensor tensor, uint64_t* handle, uint64_t* data) {
  *data = PutTensor(tensor);
  *handle = Put(std::move(tensor));
  tensor_data_.emplace(*handle, *data);
}

void SessionStateObj::Free(uint64_t handle) {
  objects_.erase(handle);
  auto it = tensor_data_.find(handle);
  if (it != tensor_data_.end()) {
    buffers_.erase(it->second);
    tensor_data_.erase(it);
  }
}

void SessionStateObj::Clear() {
  objects_.clear();
  buffers_.clear();
  tensor_data_.clear();
}

}  // namespace rpc
}  // namespace core
}  // namespace tvm_runtime
