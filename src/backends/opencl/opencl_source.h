/*
 * The "cl" format of apache-tvm 0.27 OpenCL modules: one OpenCL C text holding every kernel, each
 * starting at a line "// Function: <kernel name>".  Programs are built per kernel, so the text is
 * split into one self-contained piece per kernel.
 */
#ifndef TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_SOURCE_H_
#define TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_SOURCE_H_

#include <map>
#include <string>

namespace tvm_runtime {
namespace opencl {

/* Kernel name -> source piece.  Text before the first marker (if any) is a shared preamble and
 * is prepended to every piece.  A text without markers is returned under the empty name. */
std::map<std::string, std::string> SplitKernelSources(const std::string& code);

}  // namespace opencl
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_OPENCL_OPENCL_SOURCE_H_
