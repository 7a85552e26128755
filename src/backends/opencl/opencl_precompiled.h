/*
 * The bytes of apache-tvm 0.27's `opencl.GetPreCompiledPrograms` / `opencl.SetPreCompiledPrograms`
 * (what MLC-LLM and other apps persist next to a model): a u64 count, then per kernel its name and
 * its program binary, each a u64 length followed by the bytes (all little-endian).
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_PRECOMPILED_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_PRECOMPILED_H_

#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace opencl {

using PreCompiledPrograms = std::vector<std::pair<std::string, std::string>>;  // name, binary

std::string EncodePreCompiledPrograms(const PreCompiledPrograms& programs);

/* Throws ValueError saying what is wrong with `bytes`. */
PreCompiledPrograms DecodePreCompiledPrograms(const std::string& bytes);

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_PRECOMPILED_H_
