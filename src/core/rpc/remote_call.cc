#include "remote_call.h"

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>
#include <vector>

#include "../tensor_ops.h"
#include "wire_format.h"

namespace tvm_runtime {
namespace core {
namespace rpc {
namespace {

namespace ffi = ::tvm::ffi;

/* One argument as read off the wire: a plain value, or a handle / tensor still to resolve
 * against the session's tables (resolving can fail without the packet being malformed). */
struct WireValue {
  enum class Kind { kValue, kHandle, kTensor } kind = Kind::kValue;
  ffi::Any value;
  uint64_t handle = 0;
  TensorMeta tensor;
};

ffi::Any ReadPlain(PacketReader* r, int32_t type_index, WireValue* out) {
  switch (type_index) {
    case wire_type::kNone:
      return ffi::Any();
    case wire_type::kInt:  // also kept as a handle: FREE_HANDLE sends its handle as an int
      out->handle = r->Read<uint64_t>();
      return ffi::Any(static_cast<int64_t>(out->handle));
    case wire_type::kBool:
      return ffi::Any(r->Read<int64_t>() != 0);
    case wire_type::kFloat:
      return ffi::Any(r->Read<double>());
    case wire_type::kOpaquePtr: {
      out->handle = r->Read<uint64_t>();
      return out->handle ? ffi::Any(reinterpret_cast<void*>(out->handle)) : ffi::Any();
    }
    case wire_type::kDataType: {
      DLDataType dtype;
      dtype.code = r->Read<uint8_t>();
      dtype.bits = r->Read<uint8_t>();
      dtype.lanes = r->Read<uint16_t>();
      r->Read<int32_t>();  // padding to 8 bytes
      return ffi::Any(dtype);
    }
    case wire_type::kDevice: {
      DLDevice device;
      device.device_type = static_cast<DLDeviceType>(r->Read<int32_t>());
      device.device_id = r->Read<int32_t>();
      return ffi::Any(device);
    }
    case wire_type::kRawStr: {
      std::string_view text = r->Bytes(r->Length());
      return ffi::Any(ffi::String(text.data(), text.size()));
    }
    case wire_type::kByteArrayPtr: {
      std::string_view bytes = r->Bytes(r->Length());
      return ffi::Any(ffi::Bytes(bytes.data(), bytes.size()));
    }
    default:
      break;
  }
  throw WireError("unknown type index " + std::to_string(type_index));
}

WireValue ReadValue(PacketReader* r) {
  WireValue out;
  int32_t type_index = r->Read<int32_t>();
  if (type_index == wire_type::kFunction || type_index == wire_type::kModule) {
    out.kind = WireValue::Kind::kHandle;
    out.handle = r->Read<uint64_t>();
  } else if (type_index == wire_type::kDLTensorPtr) {
    out.kind = WireValue::Kind::kTensor;
    out.tensor = r->Tensor();
  } else if (type_index >= wire_type::kObjectBegin || type_index == wire_type::kSmallStr ||
             type_index == wire_type::kSmallBytes) {
    // objects repeat their type index (uint32) before the payload
    uint32_t inner = r->Read<uint32_t>();
    if (inner == wire_type::kRPCObjectRef) {
      out.kind = WireValue::Kind::kHandle;
      out.handle = r->Read<uint64_t>();
    } else if (inner == wire_type::kStr) {
      out.value = ReadPlain(r, wire_type::kRawStr, &out);
    } else if (inner == wire_type::kBytes) {
      out.value = ReadPlain(r, wire_type::kByteArrayPtr, &out);
    } else {
      throw WireError("object type index " + std::to_string(inner) + " cannot travel over RPC");
    }
  } else {
    out.value = ReadPlain(r, type_index, &out);
  }
  return out;
}

std::vector<WireValue> ReadSequence(PacketReader* r) {
  int32_t count = r->Read<int32_t>();
  if (count < 0 || static_cast<size_t>(count) > r->remaining() / 4) {
    throw WireError("argument count " + std::to_string(count) + " does not fit the packet");
  }
  std::vector<WireValue> values(static_cast<size_t>(count));
  for (WireValue& v : values) v = ReadValue(r);
  return values;
}

/* The tensor a wire DLTensor names: the issued tensor itself, or a view into its memory. */
ffi::Tensor TensorFromMeta(SessionStateObj* state, const TensorMeta& meta) {
  const ffi::Tensor& base = state->TensorOf(meta.data);
  const DLTensor* t = base.GetDLTensorPtr();
  bool same_shape = t->ndim == static_cast<int32_t>(meta.shape.size()) &&
                    std::equal(meta.shape.begin(), meta.shape.end(), t->shape);
  bool same_dtype = t->dtype.code == meta.dtype.code && t->dtype.bits == meta.dtype.bits &&
                    t->dtype.lanes == meta.dtype.lanes;
  if (meta.byte_offset == 0 && same_shape && same_dtype) return base;
  return CreateView(base, ffi::ShapeView(meta.shape.data(), meta.shape.size()), meta.dtype,
                    meta.byte_offset);
}

/* The `nbytes` bytes at the wire tensor's offset, as one uint8 vector (what copies move). */
ffi::Tensor FlatView(SessionStateObj* state, const TensorMeta& meta, uint64_t nbytes) {
  int64_t extent = static_cast<int64_t>(nbytes);
  return CreateView(state->TensorOf(meta.data), ffi::ShapeView(&extent, 1),
                    DLDataType{kDLUInt, 8, 1}, meta.byte_offset);
}

ffi::Any Resolve(SessionStateObj* state, WireValue&& v) {
  switch (v.kind) {
    case WireValue::Kind::kHandle:
      return state->Get(v.handle, "object");
    case WireValue::Kind::kTensor:
      return TensorFromMeta(state, v.tensor);
    case WireValue::Kind::kValue:
      break;
  }
  return std::move(v.value);
}

std::string ReturnNone() {
  PacketWriter w(Code::kReturn);
  w.Put<int32_t>(1);
  w.Put<int32_t>(wire_type::kNone);
  return std::move(w).Finish();
}

/* A call's result as apache-tvm's local session returns it: (type index, value[, extra]);
 * objects stay on the server behind a new handle. */
std::string EncodeReturn(SessionStateObj* state, ffi::Any rv) {
  int32_t type_index = rv.type_index();
  PacketWriter w(Code::kReturn);
  if (type_index == ffi::TypeIndex::kTVMFFITensor) {
    ffi::Tensor tensor = rv.cast<ffi::Tensor>();
    const DLTensor* t = tensor.GetDLTensorPtr();
    TensorMeta meta;
    meta.device = t->device;
    meta.dtype = t->dtype;
    meta.shape.assign(t->shape, t->shape + t->ndim);
    uint64_t handle = 0;
    state->PutReturnedTensor(std::move(tensor), &handle, &meta.data);
    w.Put<int32_t>(3);
    w.Int(type_index);
    w.Put<int32_t>(wire_type::kDLTensorPtr);
    w.Tensor(meta);
    w.Handle(wire_type::kOpaquePtr, handle);
    return std::move(w).Finish();
  }
  w.Put<int32_t>(2);
  switch (type_index) {
    case ffi::TypeIndex::kTVMFFINone:
      w.Int(type_index);
      w.Put<int32_t>(wire_type::kNone);
      break;
    case ffi::TypeIndex::kTVMFFIInt:
      w.Int(type_index);
      w.Int(rv.cast<int64_t>());
      break;
    case ffi::TypeIndex::kTVMFFIBool:
      w.Int(type_index);
      w.Put<int32_t>(wire_type::kBool);
      w.Put<int64_t>(rv.cast<bool>() ? 1 : 0);
      break;
    case ffi::TypeIndex::kTVMFFIFloat:
      w.Int(type_index);
      w.Put<int32_t>(wire_type::kFloat);
      w.Put<double>(rv.cast<double>());
      break;
    case ffi::TypeIndex::kTVMFFIOpaquePtr:
      w.Int(type_index);
      w.Handle(wire_type::kOpaquePtr, reinterpret_cast<uint64_t>(rv.cast<void*>()));
      break;
    case ffi::TypeIndex::kTVMFFIDataType: {
      DLDataType dtype = rv.cast<DLDataType>();
      w.Int(type_index);
      w.Put<int32_t>(wire_type::kDataType);
      w.Put<uint8_t>(dtype.code);
      w.Put<uint8_t>(dtype.bits);
      w.Put<uint16_t>(dtype.lanes);
      w.Put<int32_t>(0);
      break;
    }
    case ffi::TypeIndex::kTVMFFIDevice: {
      DLDevice device = rv.cast<DLDevice>();
      w.Int(type_index);
      w.Put<int32_t>(wire_type::kDevice);
      w.Put<int32_t>(static_cast<int32_t>(device.device_type));
      w.Put<int32_t>(device.device_id);
      break;
    }
    case ffi::TypeIndex::kTVMFFISmallStr:
    case ffi::TypeIndex::kTVMFFIStr: {
      ffi::String text = rv.cast<ffi::String>();
      w.Int(wire_type::kStr);
      w.Text(wire_type::kRawStr, std::string_view(text.data(), text.size()));
      break;
    }
    case ffi::TypeIndex::kTVMFFISmallBytes:
    case ffi::TypeIndex::kTVMFFIBytes: {
      ffi::Bytes bytes = rv.cast<ffi::Bytes>();
      w.Int(wire_type::kBytes);
      w.Text(wire_type::kByteArrayPtr, std::string_view(bytes.data(), bytes.size()));
      break;
    }
    default:
      if (type_index < ffi::TypeIndex::kTVMFFIStaticObjectBegin ||
          type_index == ffi::TypeIndex::kTVMFFIOpaquePyObject) {
        backend::ThrowError("TypeError",
                            "cannot return a value of type " + rv.GetTypeKey() + " over RPC");
      }
      // functions, modules and other objects stay here; the client gets a handle
      w.Int(type_index);
      w.Handle(wire_type::kOpaquePtr, state->Put(std::move(rv)));
      break;
  }
  return std::move(w).Finish();
}

/* An error as the client shows it: its kind and message (and, with TVM_RPC_SERVER_TRACEBACK
 * set, where it happened). */
std::string Describe(const ffi::Error& err) {
  // the session's Python functions describe their errors themselves (their kinds, such as
  // PermissionError, have no tvm-ffi name of their own)
  if (err.kind() == kDescribedErrorKind) return err.message();
  std::string text = err.kind() + ": " + err.message();
  if (std::getenv("TVM_RPC_SERVER_TRACEBACK") != nullptr) {
    text += "\n" + err.TracebackMostRecentCallLast();
  }
  return text;
}

/* Runs `answer`; a failure becomes the EXCEPTION reply (a malformed packet was already thrown
 * as WireError before any of this runs). */
template <typename F>
std::string Guarded(F answer) {
  try {
    return answer();
  } catch (const ffi::Error& err) {
    return ExceptionPacket(Describe(err));
  } catch (const std::exception& err) {
    return ExceptionPacket(std::string("RuntimeError: ") + err.what());
  }
}

/* Marks the session busy while a client's function runs (the hang-up watcher reads it). */
class BusyScope {
 public:
  explicit BusyScope(SessionStateObj* state) : state_(state) { state_->busy.store(true); }
  ~BusyScope() { state_->busy.store(false); }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;

 private:
  SessionStateObj* state_;
};

std::string HexHandle(uint64_t handle) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(handle));
  return text;
}

std::string CallFunc(SessionStateObj* state, PacketReader* r) {
  uint64_t handle = r->Read<uint64_t>();
  std::vector<WireValue> wire_args = ReadSequence(r);
  return Guarded([&] {
    std::optional<ffi::Function> func = state->Get(handle, "function").as<ffi::Function>();
    if (!func.has_value()) {
      backend::ThrowError("TypeError", "remote handle " + HexHandle(handle) + " is not a function");
    }
    std::vector<ffi::Any> args;
    args.reserve(wire_args.size());
    for (WireValue& v : wire_args) args.push_back(Resolve(state, std::move(v)));
    std::vector<ffi::AnyView> views(args.begin(), args.end());
    ffi::Any rv;
    {
      BusyScope busy(state);
      func->CallPacked(views.data(), static_cast<int32_t>(views.size()), &rv);
    }
    return EncodeReturn(state, std::move(rv));
  });
}

std::string CopyToRemote(SessionStateObj* state, PacketReader* r) {
  TensorMeta meta = r->Tensor();
  uint64_t nbytes = r->Read<uint64_t>();
  if (nbytes > r->remaining()) {
    throw WireError("copy of " + std::to_string(nbytes) + " bytes but only " +
                    std::to_string(r->remaining()) + " follow");
  }
  const char* src = r->Take(static_cast<size_t>(nbytes));
  return Guarded([&] {
    ffi::Tensor view = FlatView(state, meta, nbytes);
    if (nbytes != 0) CopyFromHost(view.GetDLTensorPtr(), src, static_cast<int64_t>(nbytes));
    return ReturnNone();
  });
}

std::string CopyFromRemote(SessionStateObj* state, PacketReader* r, uint64_t max_copy_bytes) {
  TensorMeta meta = r->Tensor();
  uint64_t nbytes = r->Read<uint64_t>();
  if (nbytes > max_copy_bytes) {
    throw WireError("copy of " + std::to_string(nbytes) + " bytes exceeds the server limit");
  }
  return Guarded([&] {
    ffi::Tensor view = FlatView(state, meta, nbytes);
    PacketWriter w(Code::kCopyAck);
    char* dst = w.Grow(static_cast<size_t>(nbytes));
    if (nbytes != 0) CopyToHost(view.GetDLTensorPtr(), dst, static_cast<int64_t>(nbytes));
    return std::move(w).Finish();
  });
}

std::string FreeHandle(SessionStateObj* state, PacketReader* r) {
  std::vector<WireValue> args = ReadSequence(r);
  return Guarded([&] {
    if (args.empty()) backend::ThrowError("IndexError", "FreeHandle needs the handle to free");
    state->Free(args[0].handle);
    return ReturnNone();
  });
}

}  // namespace

std::string ExceptionPacket(const std::string& message) {
  PacketWriter w(Code::kException);
  w.Put<int32_t>(1);
  w.Text(wire_type::kRawStr, message);
  return std::move(w).Finish();
}

std::optional<std::string> AnswerPacket(SessionStateObj* state, const char* body, size_t size,
                                        uint64_t max_copy_bytes) {
  PacketReader r(body, size);
  switch (static_cast<Code>(r.Read<int32_t>())) {
    case Code::kCallFunc:
      return CallFunc(state, &r);
    case Code::kCopyToRemote:
      return CopyToRemote(state, &r);
    case Code::kCopyFromRemote:
      return CopyFromRemote(state, &r, max_copy_bytes);
    case Code::kFreeHandle:
      return FreeHandle(state, &r);
    default:
      return std::nullopt;
  }
}

}  // namespace rpc
}  // namespace core
}  // namespace tvm_runtime
