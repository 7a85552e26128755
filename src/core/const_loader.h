/*
 * The const_loader module (const_loader.cc) of a library file: its constants shared with other
 * processes rather than copied.
 */
#ifndef TVM_RUNTIME_CORE_CONST_LOADER_H_
#define TVM_RUNTIME_CORE_CONST_LOADER_H_

#include <tvm/ffi/extra/module.h>

#include <memory>

#include "vm/payload.h"

namespace tvm_runtime {
namespace core {

/* The const_loader whose serialized form is `payload` (a span of a mapped library file): each
 * CPU constant aliases the file where it is 64-byte aligned, else lies in the weight store's
 * realigned image (or a private copy without a store), as the VM's constants do. */
::tvm::ffi::Module LoadConstLoaderShared(std::shared_ptr<const vm::Payload> payload);

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_CONST_LOADER_H_
