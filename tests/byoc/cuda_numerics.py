"""How close cublas_json and cudnn_json results must be to numpy's, following tvm-runtime-cuda's
float32 numerics policy (src/backends/cuda/byoc/tf32_policy.h, $TVM_CUDA_ALLOW_TF32):

* unset (apache-tvm 0.27's behaviour): cuDNN may run float32 convolutions on TF32 tensor cores
  (0.27 asks for CUDNN_TENSOR_OP_MATH), cuBLASLt runs float32 matmuls in plain fp32
  (CUBLAS_COMPUTE_32F);
* ``0``: neither uses TF32; ``1``: both may;
* NVIDIA_TF32_OVERRIDE=0 disables TF32 in both libraries whatever the policy.

The tolerances, and why:

* plain fp32: 1e-4 relative and absolute on a GPU (accumulation order only);
* float16 outputs: 2e-3 (half's 11 significant bits);
* TF32: operands keep 11 significant bits (unit roundoff u = 2^-11), so each product is off by up
  to 2u relative, 4u if the conversion truncates; we allow 4u = 2^-9 relative, and 2^-9 of the
  output's largest magnitude absolute (sums of products of both signs cancel, the error does not).
  The first H200 run's worst case, cuDNN on the compiled fixtures, was 2.6e-3 on outputs up to 10;
* cuBLASLt's GELU epilogue: NVIDIA does not document its formula.  The references use the tanh
  form (what cuBLAS 13.1 matched within 1e-4 on the H200); a kernel on the hardware tanh
  (tanh.approx.f32, relative error up to 2^-11) is off by up to 0.5·|x|·2^-11, so we allow 2^-11
  relative and 2^-12 of the largest output magnitude absolute.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

TF32_ENV = "TVM_CUDA_ALLOW_TF32"
TF32_UNIT_ROUNDOFF = 2.0**-11
# The fixture functions that end in cuBLASLt's GELU epilogue (cublas.matmul_transposed_bias_gelu),
# in both fixture sets; the fake tests check their epilogue codes.
GELU_FUNCTIONS = frozenset({"mlp"})


def tf32_in_effect(vendor: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether `vendor` ("cudnn" or "cublas") may run float32 work on TF32 tensor cores in a
    process with environment `env` (default: this one's)."""
    env = os.environ if env is None else env
    if env.get("NVIDIA_TF32_OVERRIDE") == "0":
        return False
    policy = env.get(TF32_ENV, "")
    if vendor == "cudnn":
        return policy != "0"
    if vendor == "cublas":
        return policy == "1"
    raise ValueError(f"unknown vendor {vendor!r}")


def tolerance(
    want: np.ndarray, *, tf32: bool, gelu: bool = False, plain: float = 1e-4, half: float = 2e-3
) -> tuple[float, float]:
    """(rtol, atol) for comparing a result with numpy's `want` (see the module's docstring);
    `plain` and `half` are the bounds without TF32 or GELU (tighter on the fakes, which compute in
    double precision)."""
    rtol = atol = half if want.dtype == np.float16 else plain
    scale = max(1.0, float(np.abs(want.astype("float64")).max())) if want.size else 1.0
    if tf32 and want.dtype == np.float32:
        rtol = max(rtol, 4 * TF32_UNIT_ROUNDOFF)
        atol = max(atol, 4 * TF32_UNIT_ROUNDOFF * scale)
    if gelu:
        rtol = max(rtol, TF32_UNIT_ROUNDOFF)
        atol = max(atol, TF32_UNIT_ROUNDOFF / 2 * scale)
    return rtol, atol


def assert_matches(
    got: np.ndarray, want: np.ndarray, *, tf32: bool, gelu: bool = False, what: str = "", **bounds: float
) -> None:
    rtol, atol = tolerance(want, tf32=tf32, gelu=gelu, **bounds)
    np.testing.assert_allclose(
        np.asarray(got, dtype="float64"),
        want.astype("float64"),
        rtol=rtol,
        atol=atol,
        err_msg=f"{what} (rtol={rtol:.3g}, atol={atol:.3g}, tf32={tf32}, gelu={gelu})",
    )
