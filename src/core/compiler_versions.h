/* The apache-tvm releases whose exported artifacts tvm-runtime runs (docs/compatibility.md,
 * "Artifacts of older compilers"): named in every error that refuses an artifact's convention. */
#ifndef TVM_RUNTIME_CORE_COMPILER_VERSIONS_H_
#define TVM_RUNTIME_CORE_COMPILER_VERSIONS_H_

namespace tvm_runtime {
namespace core {

constexpr char kSupportedCompilers[] = "apache-tvm 0.25, 0.26 and 0.27";
constexpr char kReexportAdvice[] =
    "Re-export the model with one of them (tvm.compile(...).export_library(...)), or run it "
    "with the runtime of the apache-tvm that built it.";

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_COMPILER_VERSIONS_H_
