/*
 * Parameter blobs (runtime.SaveParams / LoadParams and the *File variants) in apache-tvm 0.27's
 * format, so params saved by either runtime load in the other:
 *   u64 kParamsMagic; u64 reserved; vec<str> names; u64 n; n x tensor record
 *   tensor record: u64 kTensorMagic; u64 reserved; i32 device_type(=CPU); i32 device_id;
 *                  i32 ndim; DLDataType; ndim x i64 shape; i64 nbytes; raw little-endian data
 */
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core_init.h"
#include "device_registry.h"

namespace tvm_runtime {
namespace core {
namespace {

using ::tvm::ffi::Bytes;
using ::tvm::ffi::Map;
using ::tvm::ffi::String;
using ::tvm::ffi::Tensor;

constexpr uint64_t kParamsMagic = 0xF7E58D4F05049CB7ULL;
constexpr uint64_t kTensorMagic = 0xDD5E40F096B4A13FULL;

template <typename T>
void Put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void PutString(std::string* out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out->append(s);
}

Tensor Allocate(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev) {
  static auto alloc = ::tvm::ffi::Function::GetGlobalRequired("runtime.TVMTensorAllocWithScope");
  return alloc(::tvm::ffi::Shape(shape), dtype, dev, ::tvm::ffi::Optional<String>()).cast<Tensor>();
}

void CopyToHost(const Tensor& t, void* dst, uint64_t nbytes) {
  static auto copy = ::tvm::ffi::Function::GetGlobalRequired("runtime.TVMTensorCopyToBytes");
  copy(t, dst, static_cast<int64_t>(nbytes));
}

void WriteTensor(std::string* out, const Tensor& t) {
  if (!t.IsContiguous()) backend::ThrowError("ValueError", "cannot save a non-contiguous tensor");
  uint64_t nbytes = ::tvm::ffi::GetDataSize(*t.GetDLTensorPtr());
  Put<uint64_t>(out, kTensorMagic);
  Put<uint64_t>(out, 0);
  Put<int32_t>(out, kDLCPU);  // records always hold host data
  Put<int32_t>(out, 0);
  Put<int32_t>(out, t.GetDLTensorPtr()->ndim);
  Put<DLDataType>(out, t.GetDLTensorPtr()->dtype);
  for (int i = 0; i < t.GetDLTensorPtr()->ndim; ++i)
    Put<int64_t>(out, t.GetDLTensorPtr()->shape[i]);
  Put<int64_t>(out, static_cast<int64_t>(nbytes));
  size_t at = out->size();
  out->resize(at + nbytes);
  if (nbytes != 0) CopyToHost(t, &(*out)[at], nbytes);
}

Tensor ReadTensor(backend::BlobReader* r) {
  if (r->Read<uint64_t>() != kTensorMagic) r->Fail("bad tensor magic");
  r->Read<uint64_t>();
  DLDevice dev{static_cast<DLDeviceType>(r->Read<int32_t>()), r->Read<int32_t>()};
  if (dev.device_type != kDLCPU) r->Fail("tensor record is not a CPU tensor");
  int32_t ndim = r->Read<int32_t>();
  if (ndim < 0 || ndim > 64) r->Fail("implausible ndim " + std::to_string(ndim));
  DLDataType dtype = r->Read<DLDataType>();
  std::vector<int64_t> shape(ndim);
  for (auto& d : shape) d = r->Read<int64_t>();
  int64_t nbytes = r->Read<int64_t>();
  DLTensor proto{};
  proto.ndim = ndim;
  proto.shape = shape.data();
  proto.dtype = dtype;
  if (nbytes < 0 || static_cast<uint64_t>(nbytes) != ::tvm::ffi::GetDataSize(proto) ||
      static_cast<uint64_t>(nbytes) > r->remaining()) {
    r->Fail("tensor data size does not match its shape and dtype");
  }
  Tensor t = Allocate(shape, dtype, DLDevice{kDLCPU, 0});
  std::vector<char> data(static_cast<size_t>(nbytes));
  for (auto& c : data) c = r->Read<char>();
  if (nbytes != 0) std::memcpy(t.GetDLTensorPtr()->data, data.data(), data.size());
  return t;
}

Bytes SaveParams(const Map<String, Tensor>& params) {
  std::string out;
  Put<uint64_t>(&out, kParamsMagic);
  Put<uint64_t>(&out, 0);
  Put<uint64_t>(&out, params.size());
  std::vector<Tensor> tensors;
  for (const auto& kv : params) {
    PutString(&out, kv.first);
    tensors.push_back(kv.second);
  }
  Put<uint64_t>(&out, tensors.size());
  for (const Tensor& t : tensors) WriteTensor(&out, t);
  return Bytes(std::move(out));
}

Map<String, Tensor> LoadParams(const char* data, size_t size) {
  backend::BlobReader r(data, size, "params");
  if (r.Read<uint64_t>() != kParamsMagic) {
    r.Fail("not a TVM params blob (bad magic)");
  }
  r.Read<uint64_t>();
  std::vector<std::string> names = r.ReadStringVector();
  uint64_t n = r.ReadCount(8, "the tensor list");
  if (n != names.size()) r.Fail("names and tensors differ in count");
  Map<String, Tensor> out;
  for (uint64_t i = 0; i < n; ++i) out.Set(String(names[i]), ReadTensor(&r));
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) backend::ThrowError("FileNotFoundError", "cannot open params file '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

void RegisterParamsGlobals() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("runtime.SaveParams", SaveParams)
      .def("runtime.SaveParamsToFile",
           [](const Map<String, Tensor>& params, const std::string& path) {
             Bytes blob = SaveParams(params);
             std::ofstream f(path, std::ios::binary);
             if (!f) backend::ThrowError("OSError", "cannot write params file '" + path + "'");
             f.write(blob.data(), static_cast<std::streamsize>(blob.size()));
           })
      .def("runtime.LoadParams",
           [](const Bytes& blob) { return LoadParams(blob.data(), blob.size()); })
      .def("runtime.LoadParamsFromFile", [](const std::string& path) {
        std::string data = ReadFile(path);
        return LoadParams(data.data(), data.size());
      });
}

}  // namespace core
}  // namespace tvm_runtime
