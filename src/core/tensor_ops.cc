#include "tensor_ops.h"

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm_runtime/backend/detail/owned_any.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <string>
#include <vector>

#include "device_registry.h"

namespace tvm_runtime {
namespace core {
namespace {

namespace ffi = ::tvm::ffi;

constexpr DLDevice kHostDevice{kDLCPU, 0};

// NDAlloc of AllocTensor: the memory comes from the device's backend table.
struct BackendAlloc {
  const TVMRuntimeDeviceAPI* api;

  void AllocData(DLTensor* t) {
    uint64_t nbytes = ffi::GetDataSize(*t);
    uint64_t elem = (static_cast<uint64_t>(t->dtype.bits) * t->dtype.lanes + 7) / 8;
    uint64_t alignment = std::max<uint64_t>(TVM_RUNTIME_ALLOC_ALIGNMENT, elem);
    Check(api->alloc_data(api->self, t->device.device_id, nbytes, alignment, t->dtype, &t->data));
  }

  void FreeData(DLTensor* t) {
    // A destructor cannot throw; drop the error (the driver is most likely shutting down).
    if (api->free_data(api->self, t->device.device_id, t->data) != 0) DropRaisedError();
  }
};

void RequireContiguous(const DLTensor* t, const char* what) {
  if (!ffi::IsContiguous(*t)) {
    backend::ThrowError("ValueError", std::string(what) + " must be a contiguous tensor");
  }
}

std::string ShapeText(const int64_t* shape, int ndim) {
  std::string out = "(";
  for (int i = 0; i < ndim; ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + ")";
}

// Checks the host buffer's size, then copies it in or out through the tensor's backend and waits.
void CopyHostBytes(const DLTensor* t, void* host, int64_t nbytes, bool to_tensor) {
  RequireContiguous(t, "tensor");
  uint64_t expect = ffi::GetDataSize(*t);
  if (nbytes < 0 || static_cast<uint64_t>(nbytes) != expect) {
    backend::ThrowError("ValueError", "byte size mismatch: tensor holds " + std::to_string(expect) +
                                          " bytes, buffer has " + std::to_string(nbytes));
  }
  if (expect == 0) return;
  const TVMRuntimeDeviceAPI& api = RequireDevice(t->device.device_type);
  if (to_tensor) {
    Check(api.copy_data(api.self, host, 0, t->data, t->byte_offset, expect, kHostDevice, t->device,
                        t->dtype, nullptr));
  } else {
    Check(api.copy_data(api.self, t->data, t->byte_offset, host, 0, expect, t->device, kHostDevice,
                        t->dtype, nullptr));
  }
  Check(api.stream_sync(api.self, t->device.device_id, nullptr));
}

}  // namespace

std::string DescribeDevice(DLDevice device) {
  return DeviceTypeName(device.device_type) + ":" + std::to_string(device.device_id);
}

uint64_t CheckedByteSize(const int64_t* shape, int ndim, DLDataType dtype) {
  uint64_t nbytes = 0;
  switch (CompactByteSize(shape, ndim, dtype, &nbytes)) {
    case TensorSize::kOk:
      return nbytes;
    case TensorSize::kNegativeDimension:
      backend::ThrowError("ValueError", "negative dimension in tensor shape");
    case TensorSize::kTooLarge:
      break;
  }
  backend::ThrowError("ValueError", "a tensor of shape " + ShapeText(shape, ndim) +
                                        " is too large: its size in bytes does not fit in 64 "
                                        "bits; check the shape");
}

ffi::Tensor AllocTensor(ffi::ShapeView shape, DLDataType dtype, DLDevice device) {
  CheckedByteSize(shape.data(), static_cast<int>(shape.size()), dtype);
  const TVMRuntimeDeviceAPI& api = RequireDevice(device.device_type);
  return ffi::Tensor::FromNDAlloc(BackendAlloc{&api}, shape, dtype, device);
}

void CopyFromHost(const DLTensor* dst, const void* host, int64_t nbytes) {
  CopyHostBytes(dst, const_cast<void*>(host), nbytes, /*to_tensor=*/true);
}

void CopyToHost(const DLTensor* src, void* host, int64_t nbytes) {
  CopyHostBytes(src, host, nbytes, /*to_tensor=*/false);
}

void CopyTensor(const DLTensor* from, const DLTensor* to, CopyWait wait) {
  RequireContiguous(from, "source");
  RequireContiguous(to, "destination");
  uint64_t n = ffi::GetDataSize(*from);
  if (n != ffi::GetDataSize(*to)) {
    backend::ThrowError("ValueError", "cannot copy between tensors of different byte sizes (" +
                                          std::to_string(n) + " vs " +
                                          std::to_string(ffi::GetDataSize(*to)) + ")");
  }
  bool from_host = IsHostDevice(from->device), to_host = IsHostDevice(to->device);
  if (from->device.device_type != to->device.device_type && !from_host && !to_host) {
    backend::ThrowError("ValueError", "cannot copy directly from " + DescribeDevice(from->device) +
                                          " to " + DescribeDevice(to->device) +
                                          "; copy through a CPU tensor");
  }
  if (n == 0) return;
  DLDevice owner = from_host ? to->device : from->device;
  const TVMRuntimeDeviceAPI& api = RequireDevice(owner.device_type);
  Check(api.copy_data(api.self, from->data, from->byte_offset, to->data, to->byte_offset, n,
                      from->device, to->device, from->dtype, nullptr));
  if (wait == CopyWait::kFinished) Check(api.stream_sync(api.self, owner.device_id, nullptr));
}

ffi::Tensor CreateView(const ffi::Tensor& source, ffi::ShapeView shape, DLDataType dtype,
                       uint64_t relative_byte_offset) {
  const DLTensor* src = source.GetDLTensorPtr();
  RequireContiguous(src, "view source");
  // Checked first: the strides below would overflow for a shape whose size does not fit.
  uint64_t view_bytes = CheckedByteSize(shape.data(), static_cast<int>(shape.size()), dtype);
  uint64_t source_bytes = ffi::GetDataSize(*src);
  if (relative_byte_offset > source_bytes || view_bytes > source_bytes - relative_byte_offset) {
    backend::ThrowError("ValueError",
                        "view of " + std::to_string(view_bytes) + " bytes at offset " +
                            std::to_string(relative_byte_offset) + " does not fit in a tensor of " +
                            std::to_string(source_bytes) + " bytes");
  }
  DLTensor proto = *src;
  proto.shape = const_cast<int64_t*>(shape.data());
  proto.ndim = static_cast<int>(shape.size());
  // tvm-ffi tensors carry explicit strides; a view is always compact.
  std::vector<int64_t> strides(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1, stride = 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
  proto.strides = strides.data();
  proto.dtype = dtype;
  proto.byte_offset += relative_byte_offset;
  TVMFFIObjectHandle out = nullptr;
  TVMFFIObjectHandle source_handle = ffi::AnyView(source).CopyToTVMFFIAny().v_obj;
  Check(TVMFFITensorCreateUnsafeView(source_handle, &proto, &out));
  return backend::TakeOwnedObject<ffi::Tensor>(kTVMFFITensor, out);
}

bool IsStorageShared(const DLTensor* a, const DLTensor* b) {
  if (a->device.device_type != b->device.device_type ||
      a->device.device_id != b->device.device_id) {
    return false;
  }
  const char* begin_a = static_cast<const char*>(a->data) + a->byte_offset;
  const char* begin_b = static_cast<const char*>(b->data) + b->byte_offset;
  return begin_a == begin_b && ffi::GetDataSize(*a) == ffi::GetDataSize(*b);
}

ffi::Tensor LeadingView(const ffi::Tensor& base, ffi::ShapeView shape) {
  return CreateView(base, shape, base.dtype(), 0);
}

}  // namespace core
}  // namespace tvm_runtime
