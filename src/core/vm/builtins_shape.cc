/*
 * VM builtins for shapes and structural checks (apache-tvm 0.27 names and signatures):
 *   vm.builtin.alloc_shape_heap(vm, n) -> int64[n] host tensor holding symbolic dimensions
 *   vm.builtin.match_shape(value, heap|None, n, n x (code, v), err_ctx)
 *       code 0: assert dim == v; 1: heap[v] = dim; 2: no-op; 3: assert dim == heap[v]
 *   vm.builtin.make_shape(heap|None, n, n x (code, v)) -> Shape   code 0: v; 1: heap[v]
 *   vm.builtin.match_prim_value / make_prim_value: the same for one scalar
 *   vm.builtin.check_{tensor,shape,prim_value,string,tuple,func}_info: type checks of inputs
 *   vm.builtin.shape_of(tensor) -> Shape, vm.builtin.tensor_to_shape(int tensor) -> Shape
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <string>
#include <vector>

#include "../ffi_names.h"
#include "vm.h"
#include "vm_init.h"

namespace tvm_runtime {
namespace core {
namespace vm {
namespace {

enum MatchShapeCode : int64_t {
  kAssertEqualToImm = 0,
  kStoreToHeap = 1,
  kNoOp = 2,
  kAssertEqualToLoad = 3
};
enum MakeShapeCode : int64_t { kUseImm = 0, kLoadShape = 1 };

// Error context strings are only materialized on failure.
std::string Context(const AnyView& err_ctx) {
  auto s = err_ctx.try_cast<ffi::String>();
  if (!s.has_value() || s->empty()) return std::string();
  std::string text = SafeText(std::string(*s));
  return text.back() == ' ' ? text : text + " ";
}

std::string TypeOf(const AnyView& v) { return v.GetTypeKey(); }

// The shape heap: an int64 host tensor (or None when a function has no symbolic shapes).
struct Heap {
  int64_t* data = nullptr;
  int64_t size = 0;

  explicit Heap(const AnyView& v) {
    if (v == nullptr) return;
    auto t = v.try_cast<DLTensor*>();
    if (!t.has_value()) {
      backend::ThrowError("TypeError", "shape heap must be a tensor, got " + TypeOf(v));
    }
    DLTensor* h = *t;
    data = reinterpret_cast<int64_t*>(static_cast<char*>(h->data) + h->byte_offset);
    size = h->ndim == 1 ? h->shape[0] : 0;
  }

  int64_t& at(int64_t i) const {
    if (i < 0 || i >= size) {
      backend::ThrowError("IndexError", "shape heap slot " + std::to_string(i) +
                                            " out of range (heap has " + std::to_string(size) +
                                            " slots)");
    }
    return data[i];
  }
};

// Dimensions of a tensor, DLTensor* or Shape without building a Shape object.
struct Dims {
  const int64_t* data;
  int64_t size;
  ffi::Shape holder;  // keeps a Shape argument alive
};

Dims DimsOf(const AnyView& v, const char* who) {
  if (auto t = v.try_cast<DLTensor*>()) return Dims{(*t)->shape, (*t)->ndim, ffi::Shape()};
  if (auto s = v.try_cast<ffi::Shape>()) {
    return Dims{s->data(), static_cast<int64_t>(s->size()), *s};
  }
  backend::ThrowError("TypeError",
                      std::string(who) + " expects a Tensor or Shape, got " + TypeOf(v));
}

void MatchShape(PackedArgs args, Any*) {
  if (args.size() < 4) backend::ThrowError("TypeError", "match_shape: too few arguments");
  Dims dims = DimsOf(args[0], "vm.builtin.match_shape");
  Heap heap(args[1]);
  int64_t n = args[2].cast<int64_t>();
  constexpr int kBegin = 3;
  if (n < 0 || kBegin + 2 * n + 1 != args.size()) {
    backend::ThrowError("TypeError", "match_shape: malformed argument list");
  }
  const AnyView& err_ctx = args[kBegin + 2 * n];
  if (dims.size != n) {
    backend::ThrowError("RuntimeError", Context(err_ctx) +
                                            "match_cast shape size mismatch: expected " +
                                            std::to_string(n) + " dimensions, got " +
                                            std::to_string(dims.size) + ".");
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t code = args[kBegin + 2 * i].cast<int64_t>();
    int64_t v = args[kBegin + 2 * i + 1].cast<int64_t>();
    int64_t dim = dims.data[i];
    switch (code) {
      case kAssertEqualToImm:
        if (dim != v) {
          backend::ThrowError("RuntimeError", Context(err_ctx) + "match_cast error: shape[" +
                                                  std::to_string(i) + "] is " +
                                                  std::to_string(dim) + ", expected " +
                                                  std::to_string(v) + ".");
        }
        break;
      case kStoreToHeap:
        heap.at(v) = dim;
        break;
      case kNoOp:
        break;
      case kAssertEqualToLoad:
        if (dim != heap.at(v)) {
          backend::ThrowError("RuntimeError", Context(err_ctx) + "match_cast error: shape[" +
                                                  std::to_string(i) + "] is " +
                                                  std::to_string(dim) +
                                                  ", but an earlier dimension bound to the same "
                                                  "variable is " +
                                                  std::to_string(heap.at(v)) + ".");
        }
        break;
      default:
        backend::ThrowError("ValueError", "match_shape: unknown code " + std::to_string(code));
    }
  }
}

void MakeShape(PackedArgs args, Any* rv) {
  if (args.size() < 2) backend::ThrowError("TypeError", "make_shape: too few arguments");
  Heap heap(args[0]);
  int64_t n = args[1].cast<int64_t>();
  constexpr int kBegin = 2;
  if (n < 0 || kBegin + 2 * n != args.size()) {
    backend::ThrowError("TypeError", "make_shape: malformed argument list");
  }
  constexpr int64_t kInline = 8;
  int64_t inline_dims[kInline];
  std::vector<int64_t> heap_dims;
  int64_t* dims = inline_dims;
  if (n > kInline) {
    heap_dims.resize(n);
    dims = heap_dims.data();
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t code = args[kBegin + 2 * i].cast<int64_t>();
    int64_t v = args[kBegin + 2 * i + 1].cast<int64_t>();
    if (code == kUseImm) {
      dims[i] = v;
    } else if (code == kLoadShape) {
      dims[i] = heap.at(v);
    } else {
      backend::ThrowError("ValueError", "make_shape: unknown code " + std::to_string(code));
    }
  }
  *rv = ffi::Shape(dims, dims + n);
}

void MatchPrimValue(int64_t value, AnyView heap_arg, int64_t code, int64_t v, AnyView err_ctx) {
  Heap heap(heap_arg);
  switch (code) {
    case kAssertEqualToImm:
      if (value != v) {
        backend::ThrowError("RuntimeError", Context(err_ctx) + "match_cast error: value " +
                                                std::to_string(value) + " does not equal " +
                                                std::to_string(v) + ".");
      }
      break;
    case kStoreToHeap:
      heap.at(v) = value;
      break;
    case kNoOp:
      break;
    case kAssertEqualToLoad:
      if (value != heap.at(v)) {
        backend::ThrowError("RuntimeError", Context(err_ctx) + "match_cast error: value " +
                                                std::to_string(value) + " does not equal " +
                                                std::to_string(heap.at(v)) + ".");
      }
      break;
    default:
      backend::ThrowError("ValueError", "match_prim_value: unknown code " + std::to_string(code));
  }
}

int64_t MakePrimValue(AnyView heap_arg, int64_t code, int64_t v) {
  if (code == kUseImm) return v;
  if (code == kLoadShape) return Heap(heap_arg).at(v);
  backend::ThrowError("ValueError", "make_prim_value: unknown code " + std::to_string(code));
}

ffi::Tensor AllocShapeHeap(AnyView ctx, int64_t size) {
  VirtualMachine* vm = VirtualMachine::FromContext(ctx);
  size_t host = vm->host_index();
  if (vm->device(host).device_type != kDLCPU) {
    backend::ThrowError("RuntimeError",
                        "the last VM device must be the CPU host (it holds the shape heap)");
  }
  return vm->allocator(host)->Empty(ffi::Shape({size}), DLDataType{kDLInt, 64, 1});
}

// check_tensor_info(value, ndim, [dtype,] err_ctx)
void CheckTensorInfo(PackedArgs args, Any*) {
  if (args.size() != 3 && args.size() != 4) {
    backend::ThrowError("TypeError", "check_tensor_info expects 3 or 4 arguments");
  }
  const AnyView& value = args[0];
  int64_t ndim = args[1].cast<int64_t>();
  const AnyView& err_ctx = args[args.size() - 1];
  auto t = value.try_cast<DLTensor*>();
  if (!t.has_value()) {
    backend::ThrowError("TypeError", Context(err_ctx) + "expect a Tensor but got " + TypeOf(value));
  }
  DLTensor* dl = *t;
  if (ndim != -1 && dl->ndim != ndim) {
    backend::ThrowError("ValueError", Context(err_ctx) + "expect a Tensor with ndim " +
                                          std::to_string(ndim) + " but got ndim " +
                                          std::to_string(dl->ndim));
  }
  if (args.size() == 4 && args[2] != nullptr) {
    DLDataType want = args[2].cast<DLDataType>();
    if (dl->dtype.code != want.code || dl->dtype.bits != want.bits ||
        dl->dtype.lanes != want.lanes) {
      backend::ThrowError("ValueError", Context(err_ctx) + "expect a Tensor with dtype " +
                                            std::string(ffi::DLDataTypeToString(want)) +
                                            " but got " +
                                            std::string(ffi::DLDataTypeToString(dl->dtype)));
    }
  }
}

void CheckShapeInfo(AnyView value, int64_t ndim, AnyView err_ctx) {
  auto s = value.as<ffi::Shape>();
  if (!s.has_value()) {
    backend::ThrowError("TypeError", Context(err_ctx) + "expect a Shape but got " + TypeOf(value));
  }
  if (ndim != -1 && static_cast<int64_t>(s->size()) != ndim) {
    backend::ThrowError("ValueError", Context(err_ctx) + "expect a Shape with ndim " +
                                          std::to_string(ndim) + " but got " +
                                          std::to_string(s->size()));
  }
}

void CheckPrimValueInfo(AnyView value, DLDataType dtype, AnyView err_ctx) {
  if (value.type_index() >= ffi::TypeIndex::kTVMFFIStaticObjectBegin) {
    backend::ThrowError("TypeError", Context(err_ctx) + "expected a " +
                                         std::string(ffi::DLDataTypeToString(dtype)) +
                                         " value, but got an object of type " + TypeOf(value));
  }
  bool ok = true;
  switch (dtype.code) {
    case kDLBool:
      ok = value.try_cast<bool>().has_value();
      break;
    case kDLInt:
    case kDLUInt:
      ok = value.try_cast<int64_t>().has_value();
      break;
    case kDLFloat:
      ok = value.try_cast<double>().has_value();
      break;
    case kDLOpaqueHandle:
      ok = (dtype.bits == 0 && dtype.lanes == 0) || value.try_cast<void*>().has_value();
      break;
    default:
      backend::ThrowError("TypeError", Context(err_ctx) + "unsupported dtype " +
                                           std::string(ffi::DLDataTypeToString(dtype)));
  }
  if (!ok) {
    backend::ThrowError("TypeError", Context(err_ctx) + "expected a " +
                                         std::string(ffi::DLDataTypeToString(dtype)) +
                                         " value, got " + TypeOf(value));
  }
}

void CheckStringInfo(AnyView value, AnyView err_ctx) {
  if (!value.as<ffi::String>().has_value()) {
    backend::ThrowError("TypeError", Context(err_ctx) + "expect a string but got " + TypeOf(value));
  }
}

void CheckTupleInfo(AnyView value, int64_t size, AnyView err_ctx) {
  const auto* arr = value.as<ffi::ArrayObj>();
  if (arr == nullptr) {
    backend::ThrowError("TypeError", Context(err_ctx) + "expect a Tuple but got " + TypeOf(value));
  }
  if (static_cast<int64_t>(arr->size()) != size) {
    backend::ThrowError("ValueError", Context(err_ctx) + "expect a Tuple with " +
                                          std::to_string(size) +
                                          " elements, but got a Tuple with " +
                                          std::to_string(arr->size()) + " elements.");
  }
}

void CheckFuncInfo(AnyView value, AnyView err_ctx) {
  if (value.as<ffi::FunctionObj>() == nullptr && value.as<VMClosureObj>() == nullptr) {
    backend::ThrowError("TypeError",
                        Context(err_ctx) + "expect a Function but got " + TypeOf(value));
  }
}

ffi::Shape ShapeOf(AnyView value) {
  auto t = value.try_cast<DLTensor*>();
  if (!t.has_value()) {
    backend::ThrowError("TypeError", "vm.builtin.shape_of expects a Tensor, got " + TypeOf(value));
  }
  return ffi::Shape((*t)->shape, (*t)->shape + (*t)->ndim);
}

ffi::Shape TensorToShape(ffi::Tensor data) {
  const DLTensor* dl = data.GetDLTensorPtr();
  if (dl->ndim != 1 || dl->dtype.code != kDLInt || dl->dtype.lanes != 1) {
    backend::ThrowError("TypeError", "tensor_to_shape expects a 1-d integer tensor");
  }
  ffi::Tensor host = data;
  if (dl->device.device_type != kDLCPU) {
    host = GetAllocator(DLDevice{kDLCPU, 0}, static_cast<int>(AllocatorType::kNaive))
               ->Empty(data.shape(), dl->dtype);
    CopyTensor(dl, host.GetDLTensorPtr(), CopyWait::kFinished);
  }
  const DLTensor* h = host.GetDLTensorPtr();
  const char* base = static_cast<const char*>(h->data) + h->byte_offset;
  std::vector<int64_t> dims(h->shape[0]);
  for (int64_t i = 0; i < h->shape[0]; ++i) {
    switch (h->dtype.bits) {
      case 16:
        dims[i] = reinterpret_cast<const int16_t*>(base)[i];
        break;
      case 32:
        dims[i] = reinterpret_cast<const int32_t*>(base)[i];
        break;
      case 64:
        dims[i] = reinterpret_cast<const int64_t*>(base)[i];
        break;
      default:
        backend::ThrowError("TypeError", "tensor_to_shape: unsupported integer width " +
                                             std::to_string(h->dtype.bits));
    }
  }
  return ffi::Shape(std::move(dims));
}

}  // namespace

void RegisterShapeBuiltins() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("vm.builtin.alloc_shape_heap", AllocShapeHeap)
      .def_packed("vm.builtin.match_shape", MatchShape)
      .def_packed("vm.builtin.make_shape", MakeShape)
      .def("vm.builtin.match_prim_value", MatchPrimValue)
      .def("vm.builtin.make_prim_value", MakePrimValue)
      .def_packed("vm.builtin.check_tensor_info", CheckTensorInfo)
      .def("vm.builtin.check_shape_info", CheckShapeInfo)
      .def("vm.builtin.check_prim_value_info", CheckPrimValueInfo)
      .def("vm.builtin.check_string_info", CheckStringInfo)
      .def("vm.builtin.check_tuple_info", CheckTupleInfo)
      .def("vm.builtin.check_func_info", CheckFuncInfo)
      .def("vm.builtin.shape_of", ShapeOf)
      .def("vm.builtin.tensor_to_shape", TensorToShape);
}

}  // namespace vm
}  // namespace core
}  // namespace tvm_runtime
