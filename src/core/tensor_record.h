/*
 * apache-tvm 0.27's serialized tensor record, shared by the params blob (params.cc) and the
 * Relax VM constant pool (vm/executable.cc):
 *   u64 kTensorMagic; u64 reserved; i32 device_type(=CPU); i32 device_id; i32 ndim;
 *   DLDataType; ndim x i64 shape; i64 nbytes; raw little-endian data
 * Records always hold host data; reading one gives a CPU tensor.
 */
#ifndef TVM_RUNTIME_CORE_TENSOR_RECORD_H_
#define TVM_RUNTIME_CORE_TENSOR_RECORD_H_

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm_runtime/backend/blob_reader.h>

#include <cstring>
#include <string>
#include <vector>

#include "device_registry.h"
#include "tensor_ops.h"

namespace tvm_runtime {
namespace core {

constexpr uint64_t kTensorRecordMagic = 0xDD5E40F096B4A13FULL;

namespace tensor_record_detail {

template <typename T>
void Put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

}  // namespace tensor_record_detail

/* Appends the record of `t` (any device; device data is copied to the host). */
inline void WriteTensorRecord(std::string* out, const ::tvm::ffi::Tensor& t) {
  using tensor_record_detail::Put;
  if (!t.IsContiguous()) backend::ThrowError("ValueError", "cannot save a non-contiguous tensor");
  const DLTensor* dl = t.GetDLTensorPtr();
  uint64_t nbytes = ::tvm::ffi::GetDataSize(*dl);
  Put<uint64_t>(out, kTensorRecordMagic);
  Put<uint64_t>(out, 0);
  Put<int32_t>(out, kDLCPU);  // records always hold host data
  Put<int32_t>(out, 0);
  Put<int32_t>(out, dl->ndim);
  Put<DLDataType>(out, dl->dtype);
  for (int i = 0; i < dl->ndim; ++i) Put<int64_t>(out, dl->shape[i]);
  Put<int64_t>(out, static_cast<int64_t>(nbytes));
  size_t at = out->size();
  out->resize(at + nbytes);
  if (nbytes != 0) CopyToHost(dl, &(*out)[at], static_cast<int64_t>(nbytes));
}

/* A record's header: what the tensor is and how many data bytes follow it. */
struct TensorRecordHeader {
  DLDataType dtype;
  std::vector<int64_t> shape;
  uint64_t nbytes;
};

/* Reads a record up to its data (the next `nbytes` bytes of `r`); a malformed record is a
 * ValueError from `r`. */
inline TensorRecordHeader ReadTensorRecordHeader(backend::BlobReader* r) {
  if (r->Read<uint64_t>() != kTensorRecordMagic) r->Fail("bad tensor magic");
  r->Read<uint64_t>();
  DLDevice dev{static_cast<DLDeviceType>(r->Read<int32_t>()), r->Read<int32_t>()};
  if (dev.device_type != kDLCPU) r->Fail("tensor record is not a CPU tensor");
  int32_t ndim = r->Read<int32_t>();
  if (ndim < 0 || ndim > 64) r->Fail("implausible ndim " + std::to_string(ndim));
  TensorRecordHeader h;
  h.dtype = r->Read<DLDataType>();
  h.shape.resize(ndim);
  for (auto& d : h.shape) d = r->Read<int64_t>();
  int64_t nbytes = r->Read<int64_t>();
  DLTensor proto{};
  proto.ndim = ndim;
  proto.shape = h.shape.data();
  proto.dtype = h.dtype;
  if (nbytes < 0 || static_cast<uint64_t>(nbytes) != ::tvm::ffi::GetDataSize(proto) ||
      static_cast<uint64_t>(nbytes) > r->remaining()) {
    r->Fail("tensor data size does not match its shape and dtype");
  }
  h.nbytes = static_cast<uint64_t>(nbytes);
  return h;
}

/* Reads one record into a new CPU tensor; a malformed record is a ValueError from `r`. */
inline ::tvm::ffi::Tensor ReadTensorRecord(backend::BlobReader* r) {
  TensorRecordHeader h = ReadTensorRecordHeader(r);
  ::tvm::ffi::Tensor t = AllocTensor(::tvm::ffi::ShapeView(h.shape.data(), h.shape.size()), h.dtype,
                                     DLDevice{kDLCPU, 0});
  r->ReadBytes(t.GetDLTensorPtr()->data, static_cast<size_t>(h.nbytes));
  return t;
}

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_TENSOR_RECORD_H_
