/*
 * Tensor globals of apache-tvm's runtime API (runtime.TVMTensor*): allocation on any registered
 * device, byte copies to/from host memory, device copies and views.
 */
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core_init.h"
#include "device_registry.h"

namespace tvm_runtime {
namespace core {
namespace {

using ::tvm::ffi::Optional;
using ::tvm::ffi::Shape;
using ::tvm::ffi::String;
using ::tvm::ffi::Tensor;

constexpr DLDevice kHostDevice{kDLCPU, 0};

// NDAlloc for Tensor::FromNDAlloc: memory comes from the device's backend table.
struct BackendAlloc {
  const TVMRuntimeDeviceAPI* api;

  void AllocData(DLTensor* t) {
    uint64_t nbytes = ::tvm::ffi::GetDataSize(*t);
    uint64_t elem = (static_cast<uint64_t>(t->dtype.bits) * t->dtype.lanes + 7) / 8;
    uint64_t alignment = std::max<uint64_t>(TVM_RUNTIME_ALLOC_ALIGNMENT, elem);
    Check(api->alloc_data(api->self, t->device.device_id, nbytes, alignment, t->dtype, &t->data));
  }

  void FreeData(DLTensor* t) {
    if (api->free_data(api->self, t->device.device_id, t->data) != 0) {
      // A destructor cannot throw; drop the error (the driver is most likely shutting down).
      TVMFFIObjectHandle ignored = nullptr;
      TVMFFIErrorMoveFromRaised(&ignored);
      if (ignored != nullptr) TVMFFIObjectDecRef(ignored);
    }
  }
};

std::string Describe(const DLDevice& d) {
  return DeviceTypeName(d.device_type) + ":" + std::to_string(d.device_id);
}

void RequireContiguous(const DLTensor* t, const char* what) {
  if (!::tvm::ffi::IsContiguous(*t)) {
    backend::ThrowError("ValueError", std::string(what) + " must be a contiguous tensor");
  }
}

std::string ShapeText(const int64_t* shape, int ndim) {
  std::string out = "(";
  for (int i = 0; i < ndim; ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + ")";
}

// The byte size of a compact tensor, checked: tvm-ffi's GetDataSize wraps around on overflow,
// and a wrapped size would back a huge shape with a tiny buffer (out-of-bounds on first use).
uint64_t CheckedByteSize(const int64_t* shape, int ndim, DLDataType dtype) {
  // Zeros are left out of the product but not of the check: the strides of an empty tensor
  // are still products of its other dimensions, which must fit in int64 (fuzzing found it).
  uint64_t elements = 1;
  bool overflow = false;
  bool empty = false;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) backend::ThrowError("ValueError", "negative dimension in tensor shape");
    if (shape[i] == 0) {
      empty = true;
      continue;
    }
    overflow |= __builtin_mul_overflow(elements, static_cast<uint64_t>(shape[i]), &elements);
  }
  uint64_t bits = 0;
  overflow |= __builtin_mul_overflow(elements, uint64_t{dtype.bits} * dtype.lanes, &bits);
  if (overflow || elements > static_cast<uint64_t>(INT64_MAX) || bits > UINT64_MAX - 7) {
    backend::ThrowError("ValueError", "a tensor of shape " + ShapeText(shape, ndim) +
                                          " is too large: its size in bytes does not fit in 64 "
                                          "bits; check the shape");
  }
  return empty ? 0 : (bits + 7) / 8;
}

Tensor AllocTensor(Shape shape, DLDataType dtype, DLDevice device, Optional<String> scope) {
  if (scope.has_value() && !scope.value().empty() && scope.value() != "global") {
    backend::ThrowError("ValueError", "memory scope '" + std::string(scope.value()) +
                                          "' is not supported by tvm-runtime (only 'global')");
  }
  CheckedByteSize(shape.data(), static_cast<int>(shape.size()), dtype);
  const TVMRuntimeDeviceAPI& api = RequireDevice(device.device_type);
  return Tensor::FromNDAlloc(BackendAlloc{&api}, shape, dtype, device);
}

// Host memory <-> tensor; synchronous like apache-tvm's.
void CopyBytes(DLTensor* t, void* host, int64_t nbytes, bool to_tensor) {
  RequireContiguous(t, "tensor");
  uint64_t expect = ::tvm::ffi::GetDataSize(*t);
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

bool IsHostLike(int device_type) {
  return device_type == kDLCPU || device_type == kDLCUDAHost || device_type == kDLROCMHost;
}

void CopyFromTo(DLTensor* from, DLTensor* to) {
  RequireContiguous(from, "source");
  RequireContiguous(to, "destination");
  uint64_t n = ::tvm::ffi::GetDataSize(*from);
  if (n != ::tvm::ffi::GetDataSize(*to)) {
    backend::ThrowError("ValueError", "cannot copy between tensors of different byte sizes (" +
                                          std::to_string(n) + " vs " +
                                          std::to_string(::tvm::ffi::GetDataSize(*to)) + ")");
  }
  int ft = from->device.device_type, tt = to->device.device_type;
  if (ft != tt && !IsHostLike(ft) && !IsHostLike(tt)) {
    backend::ThrowError("ValueError", "cannot copy directly from " + Describe(from->device) +
                                          " to " + Describe(to->device) +
                                          "; copy through a CPU tensor");
  }
  if (n == 0) return;
  // The non-host side's backend performs the copy (both sides host: the CPU table).
  int owner = IsHostLike(ft) ? tt : ft;
  const TVMRuntimeDeviceAPI& api = RequireDevice(owner);
  Check(api.copy_data(api.self, from->data, from->byte_offset, to->data, to->byte_offset, n,
                      from->device, to->device, from->dtype, nullptr));
}

Tensor CreateView(Tensor source, Shape shape, DLDataType dtype, uint64_t relative_byte_offset) {
  RequireContiguous(source.GetDLTensorPtr(), "view source");
  // Checked first: the strides below would overflow for a shape whose size does not fit.
  uint64_t view_bytes = CheckedByteSize(shape.data(), static_cast<int>(shape.size()), dtype);
  DLTensor proto = *source.GetDLTensorPtr();
  proto.shape = const_cast<int64_t*>(shape.data());
  proto.ndim = static_cast<int>(shape.size());
  // tvm-ffi views carry explicit strides; a view here is always compact.
  std::vector<int64_t> strides(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1, stride = 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
  proto.strides = strides.data();
  proto.dtype = dtype;
  uint64_t source_bytes = ::tvm::ffi::GetDataSize(*source.GetDLTensorPtr());
  if (relative_byte_offset > source_bytes || view_bytes > source_bytes - relative_byte_offset) {
    backend::ThrowError("ValueError",
                        "view of " + std::to_string(view_bytes) + " bytes at offset " +
                            std::to_string(relative_byte_offset) + " does not fit in a tensor of " +
                            std::to_string(source_bytes) + " bytes");
  }
  proto.byte_offset += relative_byte_offset;
  // Compiled kernels require byte_offset == 0: on the host fold the offset into the pointer.
  if (IsHostLike(proto.device.device_type) && proto.byte_offset != 0) {
    proto.data = static_cast<char*>(proto.data) + proto.byte_offset;
    proto.byte_offset = 0;
  }
  TVMFFIObjectHandle out = nullptr;
  TVMFFIObjectHandle source_handle = ::tvm::ffi::AnyView(source).CopyToTVMFFIAny().v_obj;
  Check(TVMFFITensorCreateUnsafeView(source_handle, &proto, &out));
  return backend::TakeOwnedObject<Tensor>(kTVMFFITensor, out);
}

}  // namespace

void RegisterTensorGlobals() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("runtime.TVMTensorAllocWithScope", AllocTensor)
      .def("runtime.TVMTensorCopyFromBytes",
           [](DLTensor* t, void* host, int64_t nbytes) { CopyBytes(t, host, nbytes, true); })
      .def("runtime.TVMTensorCopyToBytes",
           [](DLTensor* t, void* host, int64_t nbytes) { CopyBytes(t, host, nbytes, false); })
      .def("runtime.TVMTensorCopyFromTo", CopyFromTo)
      .def("runtime.TVMTensorCreateView", CreateView)
      .def("runtime.TVMTensorIsStorageShared",
           [](Tensor a, Tensor b) { return a.data_ptr() == b.data_ptr(); });
}

}  // namespace core
}  // namespace tvm_runtime
