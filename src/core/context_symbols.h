/* The conventions an exported library expects of the runtime that loads it, checked before any
 * of its code runs (context_symbol_check.cc). */
#ifndef TVM_RUNTIME_CORE_CONTEXT_SYMBOLS_H_
#define TVM_RUNTIME_CORE_CONTEXT_SYMBOLS_H_

#include <string>
#include <vector>

#include "mapped_file.h"

namespace tvm_runtime {
namespace core {

/* Refuses (ValueError) a library declaring a `__TVM*`/`__tvm_*` data symbol that is neither a
 * context symbol this runtime fills nor the library container or context: compiled host code
 * would call through that slot while it is still null.  Returns the library's undefined
 * `TVM*` functions, which CheckImportedFunctions verifies once the library is open. */
std::vector<std::string> CheckContextSymbols(const MappedFile& file, const std::string& path);

/* Refuses (ValueError) a library whose undefined `TVM*` functions nothing loaded provides: lazy
 * binding would end the process at their first call.  Closes `handle` before refusing. */
void CheckImportedFunctions(void* handle, const std::vector<std::string>& names,
                            const std::string& path);

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_CONTEXT_SYMBOLS_H_
