/*
 * Where the serialized bytes of a Relax VM executable live while it is loaded.
 *
 * Loaded from an exported library, they are a span of the library file mapped copy-on-write
 * (library_loader.cc): nothing copies them, the pages the parser touches are the only ones made
 * resident, and constants are copied or uploaded straight out of the file.  Handed over as
 * ffi::Bytes (tvm-ffi's own loader, the RPC server, a payload built in memory), they are that
 * Bytes object.  Either way the executable keeps the source alive for as long as it or a
 * tensor pointing into it lives, and saves itself by returning these bytes unchanged.
 */
#ifndef TVM_RUNTIME_CORE_VM_PAYLOAD_H_
#define TVM_RUNTIME_CORE_VM_PAYLOAD_H_

#include <tvm/ffi/string.h>

#include <cstring>
#include <memory>
#include <utility>

#include "../mapped_file.h"

namespace tvm_runtime {
namespace core {
namespace vm {

class Payload {
 public:
  virtual ~Payload() = default;
  const char* data() const { return data_; }
  size_t size() const { return size_; }

  /* The bytes as an ffi::Bytes (a copy unless they already are one). */
  virtual ::tvm::ffi::Bytes ToBytes() const { return ::tvm::ffi::Bytes(data_, size_); }
  /* Copies [p, p + n) of the payload into `dst`; false on an I/O error. */
  virtual bool Read(const char* p, size_t n, void* dst) const {
    std::memcpy(dst, p, n);
    return true;
  }
  /* [p, p + n) was copied elsewhere and will not be read again soon: drop what it holds resident,
   * if the source can (a file mapping can; memory of an ffi::Bytes cannot). */
  virtual void Release(const char* /*p*/, size_t /*n*/) const {}

 protected:
  Payload(const char* data, size_t size) : data_(data), size_(size) {}

 private:
  const char* data_;
  size_t size_;
};

/* The payload as an ffi::Bytes object (refcounted: tensors aliasing it keep it alive). */
class BytesPayload final : public Payload {
 public:
  explicit BytesPayload(::tvm::ffi::Bytes bytes)
      : Payload(bytes.data(), bytes.size()), bytes_(std::move(bytes)) {}
  ::tvm::ffi::Bytes ToBytes() const final { return bytes_; }

 private:
  ::tvm::ffi::Bytes bytes_;
};

/* A span of a file mapped copy-on-write; reads go through pread and released ranges leave
 * this process's resident set. */
class MappedPayload final : public Payload {
 public:
  MappedPayload(std::shared_ptr<const MappedFile> file, const char* data, size_t size)
      : Payload(data, size), file_(std::move(file)) {}
  bool Read(const char* p, size_t n, void* dst) const final { return file_->ReadAt(p, n, dst); }
  void Release(const char* p, size_t n) const final { file_->Release(p, n); }

 private:
  std::shared_ptr<const MappedFile> file_;
};

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_VM_PAYLOAD_H_
