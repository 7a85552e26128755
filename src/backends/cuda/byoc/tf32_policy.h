/*
 * Whether float32 work in cuDNN and cuBLASLt may run on TF32 tensor cores (inputs rounded to a
 * 10-bit mantissa, ~1e-3 relative error per product), set by $TVM_CUDA_ALLOW_TF32, read once:
 *
 *   unset  what apache-tvm 0.27's runtime does on the same artifacts: cuDNN convolutions get
 *          CUDNN_TENSOR_OP_MATH (0.27 sets it on every convolution descriptor; cuDNN may then
 *          pick TF32 kernels for float32 on Ampere and newer), cuBLASLt matmuls the compute type
 *          CUBLAS_COMPUTE_32F (0.27's choice: plain fp32, never TF32).
 *   0      never: cuDNN float32 convolutions get CUDNN_FMA_MATH, cuBLASLt CUBLAS_COMPUTE_32F.
 *   1      always: cuDNN as unset, cuBLASLt float32 matmuls CUBLAS_COMPUTE_32F_FAST_TF32.
 *
 * NVIDIA's own NVIDIA_TF32_OVERRIDE=0 still disables TF32 inside the libraries whatever this
 * says.  Half-precision inputs are not affected (they use tensor cores in every setting).
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_TF32_POLICY_H_
#define TVM_RUNTIME_BACKENDS_CUDA_TF32_POLICY_H_

#include <tvm_runtime/backend/error.h>

#include <cstdlib>
#include <string>

namespace tvm_runtime {
namespace cuda {

constexpr const char* kAllowTf32EnvVar = "TVM_CUDA_ALLOW_TF32";

enum class Tf32Policy {
  kAsApacheTvm,  // unset: cuDNN may use TF32, cuBLASLt does not
  kNever,        // 0
  kAlways,       // 1
};

/* The policy from $TVM_CUDA_ALLOW_TF32, read on the first call and kept for the process; a
 * ValueError naming the variable for anything but unset, "", "0" or "1" (not kept, so the
 * message repeats until the variable is fixed). */
inline Tf32Policy Tf32PolicyFromEnv() {
  static const Tf32Policy policy = [] {
    const char* v = std::getenv(kAllowTf32EnvVar);
    std::string s = v == nullptr ? "" : v;
    if (s.empty()) return Tf32Policy::kAsApacheTvm;
    if (s == "0") return Tf32Policy::kNever;
    if (s == "1") return Tf32Policy::kAlways;
    backend::ThrowError("ValueError", std::string(kAllowTf32EnvVar) + "='" + s +
                                          "' is not valid: use 0 (float32 never on TF32 "
                                          "tensor cores), 1 (always allowed) or leave it unset "
                                          "(apache-tvm 0.27's behaviour)");
  }();
  return policy;
}

/* Whether cuDNN may run float32 convolutions on TF32 tensor cores. */
inline bool CudnnMayUseTf32() { return Tf32PolicyFromEnv() != Tf32Policy::kNever; }

/* Whether cuBLASLt may run float32 matmuls on TF32 tensor cores. */
inline bool CublasLtMayUseTf32() { return Tf32PolicyFromEnv() == Tf32Policy::kAlways; }

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_TF32_POLICY_H_
