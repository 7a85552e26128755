/*
 * The `__tvm_ffi__library_bin` container of an exported library (tvm-0.27-abi.md, section 3.2):
 *   u64 nbytes; vec<u64> import-tree indptr; vec<u64> child indices;
 *   per module: str kind, then (unless kind == "_lib") u64 n + n payload bytes.
 */
#ifndef TVM_RUNTIME_CORE_LIBRARY_BIN_H_
#define TVM_RUNTIME_CORE_LIBRARY_BIN_H_

#include <string>

#include "mapped_file.h"

namespace tvm_runtime {
namespace core {

constexpr char kLibraryBinSymbol[] = "__tvm_ffi__library_bin";

/* Checks every size and index of the container against the symbol's own size, stepping over
 * the payloads; a ValueError naming `path` and what is wrong otherwise. */
void CheckLibraryBinContainer(const SymbolBytes& bin, const std::string& path);

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LIBRARY_BIN_H_
