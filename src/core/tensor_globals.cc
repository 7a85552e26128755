/*
 * Tensor globals of apache-tvm's runtime API (runtime.TVMTensor*), registered on top of the
 * core's tensor API (tensor_ops.h) under apache-tvm 0.27's names and signatures.
 */
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/error.h>

#include <cstdint>
#include <string>

#include "core_init.h"
#include "tensor_ops.h"

namespace tvm_runtime {
namespace core {
namespace {

namespace ffi = ::tvm::ffi;

ffi::Tensor AllocWithScope(ffi::Shape shape, DLDataType dtype, DLDevice device,
                           ffi::Optional<ffi::String> scope) {
  if (scope.has_value() && !scope.value().empty() && scope.value() != "global") {
    backend::ThrowError("ValueError", "memory scope '" + std::string(scope.value()) +
                                          "' is not supported by tvm-runtime (only 'global')");
  }
  return AllocTensor(shape, dtype, device);
}

}  // namespace

void RegisterTensorGlobals() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("runtime.TVMTensorAllocWithScope", AllocWithScope)
      .def("runtime.TVMTensorCopyFromBytes",
           [](DLTensor* t, void* host, int64_t nbytes) { CopyFromHost(t, host, nbytes); })
      .def("runtime.TVMTensorCopyToBytes",
           [](DLTensor* t, void* host, int64_t nbytes) { CopyToHost(t, host, nbytes); })
      .def("runtime.TVMTensorCopyFromTo",
           [](DLTensor* from, DLTensor* to) { CopyTensor(from, to, CopyWait::kQueued); })
      .def("runtime.TVMTensorCreateView",
           [](ffi::Tensor source, ffi::Shape shape, DLDataType dtype,
              uint64_t relative_byte_offset) {
             return CreateView(source, shape, dtype, relative_byte_offset);
           })
      .def("runtime.TVMTensorIsStorageShared", [](ffi::Tensor a, ffi::Tensor b) {
        return IsStorageShared(a.GetDLTensorPtr(), b.GetDLTensorPtr());
      });
}

}  // namespace core
}  // namespace tvm_runtime
