/*
 * The RPC wire format of apache-tvm 0.27 (protocol "0.8.0"), as the native server session reads
 * and writes it: little-endian packets of `uint64 nbytes` + body, the body starting with an int32
 * code; argument lists are `int32 count` then per value an int32 tvm-ffi type index and a payload.
 * tvm/rpc/_protocol.py is the Python side of the same format (docs/rpc.md, design: tvm-0.27-abi).
 *
 * Reading is bounds-checked: a packet that runs short, an unknown type index or a length field
 * past the packet's end is a WireError (the session ends with that message), never a read past
 * the buffer.
 */
#ifndef TVM_RUNTIME_CORE_RPC_WIRE_FORMAT_H_
#define TVM_RUNTIME_CORE_RPC_WIRE_FORMAT_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tvm_runtime {
namespace core {
namespace rpc {

// Packet codes (the int32 that starts a body).
enum class Code : int32_t {
  kShutdown = 1,
  kInitServer = 2,
  kCallFunc = 3,
  kReturn = 4,
  kException = 5,
  kCopyFromRemote = 6,
  kCopyToRemote = 7,
  kCopyAck = 8,
  kFreeHandle = 10,
};

// tvm-ffi 0.1 static type indices as they travel.
namespace wire_type {
constexpr int32_t kNone = 0;
constexpr int32_t kInt = 1;
constexpr int32_t kBool = 2;
constexpr int32_t kFloat = 3;
constexpr int32_t kOpaquePtr = 4;
constexpr int32_t kDataType = 5;
constexpr int32_t kDevice = 6;
constexpr int32_t kDLTensorPtr = 7;
constexpr int32_t kRawStr = 8;
constexpr int32_t kByteArrayPtr = 9;
constexpr int32_t kSmallStr = 11;
constexpr int32_t kSmallBytes = 12;
constexpr int32_t kObjectBegin = 64;
constexpr int32_t kStr = 65;
constexpr int32_t kBytes = 66;
constexpr int32_t kFunction = 68;
constexpr int32_t kTensor = 70;
constexpr int32_t kModule = 73;
// apache-tvm 0.27's RPCObjectRef: a remote object handle a client passes back.
constexpr int32_t kRPCObjectRef = 115;
}  // namespace wire_type

// Bound on a DLTensor's rank on the wire (a corrupt ndim must not size an allocation).
constexpr int32_t kMaxWireNdim = 64;

/* The peer's bytes do not follow the protocol: the session cannot go on. */
class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/* A DLTensor as it travels: a data handle the server issued plus how to read that memory. */
struct TensorMeta {
  uint64_t data = 0;
  DLDevice device{kDLCPU, 0};
  DLDataType dtype{kDLUInt, 8, 1};
  std::vector<int64_t> shape;
  uint64_t byte_offset = 0;
};

/* Reads one packet body held in memory; every read checks the bytes left. */
class PacketReader {
 public:
  PacketReader(const char* data, size_t size) : data_(data), size_(size) {}

  size_t remaining() const { return size_ - pos_; }
  size_t position() const { return pos_; }

  const char* Take(size_t n) {
    if (n > remaining()) {
      throw WireError("packet truncated: needed " + std::to_string(n) + " bytes at offset " +
                      std::to_string(pos_) + " of a " + std::to_string(size_) + "-byte packet");
    }
    const char* at = data_ + pos_;
    pos_ += n;
    return at;
  }

  template <typename T>
  T Read() {
    T value;
    std::memcpy(&value, Take(sizeof(T)), sizeof(T));
    return value;
  }

  /* A length field, checked against what is left (so it can size a copy safely). */
  size_t Length() {
    uint64_t n = Read<uint64_t>();
    if (n > remaining()) {
      throw WireError("length field " + std::to_string(n) + " exceeds the " +
                      std::to_string(remaining()) + " bytes left in the packet");
    }
    return static_cast<size_t>(n);
  }

  std::string_view Bytes(size_t n) { return std::string_view(Take(n), n); }

  TensorMeta Tensor() {
    TensorMeta meta;
    meta.data = Read<uint64_t>();
    meta.device.device_type = static_cast<DLDeviceType>(Read<int32_t>());
    meta.device.device_id = Read<int32_t>();
    int32_t ndim = Read<int32_t>();
    meta.dtype.code = Read<uint8_t>();
    meta.dtype.bits = Read<uint8_t>();
    meta.dtype.lanes = Read<uint16_t>();
    if (ndim < 0 || ndim > kMaxWireNdim) {
      throw WireError("DLTensor with ndim=" + std::to_string(ndim));
    }
    meta.shape.resize(static_cast<size_t>(ndim));
    for (int64_t& dim : meta.shape) {
      dim = Read<int64_t>();
      if (dim < 0) throw WireError("DLTensor with a negative dimension " + std::to_string(dim));
    }
    meta.byte_offset = Read<uint64_t>();
    return meta;
  }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

/* Builds one packet: the 8-byte length prefix is filled in by Finish(). */
class PacketWriter {
 public:
  explicit PacketWriter(Code code) {
    buf_.resize(sizeof(uint64_t));
    Put<int32_t>(static_cast<int32_t>(code));
  }

  template <typename T>
  void Put(T value) {
    buf_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }

  void Raw(const void* data, size_t n) { buf_.append(static_cast<const char*>(data), n); }

  /* Room for n bytes at the end, for callers that fill it in place (a device-to-host copy). */
  char* Grow(size_t n) {
    size_t at = buf_.size();
    buf_.resize(at + n);
    return &buf_[at];
  }

  void Tensor(const TensorMeta& meta) {
    Put<uint64_t>(meta.data);
    Put<int32_t>(static_cast<int32_t>(meta.device.device_type));
    Put<int32_t>(meta.device.device_id);
    Put<int32_t>(static_cast<int32_t>(meta.shape.size()));
    Put<uint8_t>(meta.dtype.code);
    Put<uint8_t>(meta.dtype.bits);
    Put<uint16_t>(meta.dtype.lanes);
    for (int64_t dim : meta.shape) Put<int64_t>(dim);
    Put<uint64_t>(meta.byte_offset);
  }

  /* Typed sequence values: the type index, then its payload. */
  void Int(int64_t v) {
    Put<int32_t>(wire_type::kInt);
    Put<int64_t>(v);
  }
  void Text(int32_t type_index, std::string_view bytes) {
    Put<int32_t>(type_index);
    Put<uint64_t>(bytes.size());
    Raw(bytes.data(), bytes.size());
  }
  void Handle(int32_t type_index, uint64_t handle) {
    Put<int32_t>(type_index);
    Put<uint64_t>(handle);
  }

  std::string Finish() && {
    uint64_t nbytes = buf_.size() - sizeof(uint64_t);
    std::memcpy(&buf_[0], &nbytes, sizeof(nbytes));
    return std::move(buf_);
  }

 private:
  std::string buf_;
};

}  // namespace rpc
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_RPC_WIRE_FORMAT_H_
