/*
 * Parameter blobs (runtime.SaveParams / LoadParams and the *File variants) in apache-tvm 0.27's
 * format, so params saved by either runtime load in the other:
 *   u64 kParamsMagic; u64 reserved; vec<str> names; u64 n; n x tensor record
 *   tensor record: see tensor_record.h
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
#include <tvm_runtime/backend/message_text.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core_init.h"
#include "device_registry.h"
#include "mapped_file.h"
#include "tensor_record.h"
#include "vm/constant_pool.h"
#include "vm/payload.h"

namespace tvm_runtime {
namespace core {
namespace {

using ::tvm::ffi::Bytes;
using ::tvm::ffi::Map;
using ::tvm::ffi::String;
using ::tvm::ffi::Tensor;

constexpr uint64_t kParamsMagic = 0xF7E58D4F05049CB7ULL;

template <typename T>
void Put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void PutString(std::string* out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out->append(s);
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
  for (const Tensor& t : tensors) WriteTensorRecord(&out, t);
  return Bytes(std::move(out));
}

/* `source` names the input in errors: "params blob" or "params file '<path>'".  Each tensor is
 * copied out of `data`, or, with `shared` (the payload `data` lies in: a mapped file), made by a
 * VM constant pool over it: aliasing the file where 64-byte aligned, else from the weight store
 * (vm/constant_pool.h), so processes that load one params file share it. */
Map<String, Tensor> LoadParams(const char* data, size_t size, const std::string& source,
                               const std::shared_ptr<const vm::Payload>& shared = nullptr) {
  backend::BlobReader r(data, size, source,
                        "It is truncated or was not written by save_param_dict "
                        "(tvm.runtime.save_param_dict or apache-tvm 0.27's); save the parameters "
                        "again.");
  if (r.Read<uint64_t>() != kParamsMagic) {
    r.Fail("not a TVM params blob (bad magic)");
  }
  r.Read<uint64_t>();
  std::vector<std::string> names = r.ReadStringVector();
  uint64_t n = r.ReadCount(8, "the tensor list");
  if (n != names.size()) {
    r.Fail(std::to_string(names.size()) + " names but " + std::to_string(n) + " tensors");
  }
  std::unique_ptr<vm::ConstantPool> pool;
  if (shared != nullptr) pool = std::make_unique<vm::ConstantPool>(shared);
  Map<String, Tensor> out;
  for (uint64_t i = 0; i < n; ++i) {
    r.SetItem("tensor '" + backend::Printable(names[i]) + "' (" + std::to_string(i + 1) + " of " +
              std::to_string(n) + ")");
    if (pool == nullptr) {
      out.Set(String(names[i]), ReadTensorRecord(&r));
      continue;
    }
    TensorRecordHeader h = ReadTensorRecordHeader(&r);
    pool->AddTensor(h.dtype, h.shape, data + r.position(), h.nbytes);
    r.Skip(static_cast<size_t>(h.nbytes));
  }
  // Materialized once all are known: the misaligned ones form one stored image.
  for (uint64_t i = 0; pool != nullptr && i < n; ++i) out.Set(String(names[i]), pool->Host(i));
  return out;
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
           [](const Bytes& blob) { return LoadParams(blob.data(), blob.size(), "params blob"); })
      .def("runtime.LoadParamsFromFile", [](const std::string& path) {
        // Mapped copy-on-write: the tensors point into it (or the weight store), no copy.
        auto file = std::make_shared<const MappedFile>(path, MappedFile::Mode::kCopyOnWrite,
                                                       /*keep_fd=*/true);
        std::string what = "params file '" + path + "'";
        if (file->empty()) return LoadParams("", 0, what);  // says what a params file needs
        if (!file->ok()) {
          backend::ThrowError("FileNotFoundError",
                              "cannot open params file '" + path + "': " + file->error());
        }
        auto payload = std::make_shared<vm::MappedPayload>(file, file->data(), file->size());
        return LoadParams(file->data(), file->size(), what, payload);
      });
}

}  // namespace core
}  // namespace tvm_runtime
