"""The Vulkan fixture cases: which GLSL kernels form each device module, the host function that
launches them (shaped like apache-tvm's host code), and the inputs and numpy results of its calls.
Consumed by generate.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class KernelSpec:
    name: str
    shader: str  # file in shaders/
    params: list[str]  # "handle" or a scalar dtype, in FunctionInfo order
    tags: list[str] = field(default_factory=lambda: ["blockIdx.x", "threadIdx.x"])
    ubo: bool = False


@dataclass
class Buf:
    name: str
    dtype: str
    shape: list  # ints, or "n" for the symbolic extent


@dataclass
class Scalar:
    name: str
    dtype: str


@dataclass
class Launch:
    kernel: str
    args: list[str]  # C expressions: buffer names (-> their data), workspace names, scalars
    dims: list[str]  # C expressions, one per launch tag of the kernel


@dataclass
class HostFn:
    name: str
    params: list  # Buf | Scalar
    launches: list[Launch]
    workspaces: dict[str, int] = field(default_factory=dict)  # name -> bytes


@dataclass
class Case:
    name: str
    description: str
    kernels: list[KernelSpec]
    host: HostFn
    calls: list[dict]  # {"inputs": {name: array}, "scalars": {name: value}, "outputs": {name: array}}
    rtol: float = 1e-6
    atol: float = 1e-6
    needs: list[str] = field(default_factory=list)  # target properties the kernels rely on


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def cases() -> list[Case]:
    out = []
    r = _rng(1)
    a, b = r.standard_normal(1024).astype("float32"), r.standard_normal(1024).astype("float32")
    out.append(
        Case(
            "add",
            "element-wise C = A + B, fp32, 1024 elements; grid 16 x workgroup 64",
            [KernelSpec("add_kernel", "add.comp", ["handle"] * 3)],
            HostFn(
                "add",
                [Buf("a", "float32", [1024]), Buf("b", "float32", [1024]), Buf("c", "float32", [1024])],
                [Launch("add_kernel", ["a", "b", "c"], ["16", "64"])],
            ),
            [{"inputs": {"a": a, "b": b}, "outputs": {"c": a + b}}],
        )
    )
    r = _rng(2)
    ah, bh = r.standard_normal(1024).astype("float16"), r.standard_normal(1024).astype("float16")
    out.append(
        Case(
            "add_fp16",
            "element-wise C = A + B in float16 storage and arithmetic (Float16 + 16-bit storage)",
            [KernelSpec("add_fp16_kernel", "add_fp16.comp", ["handle"] * 3)],
            HostFn(
                "add_fp16",
                [Buf("a", "float16", [1024]), Buf("b", "float16", [1024]), Buf("c", "float16", [1024])],
                [Launch("add_fp16_kernel", ["a", "b", "c"], ["16", "64"])],
            ),
            [{"inputs": {"a": ah, "b": bh}, "outputs": {"c": ah + bh}}],
            rtol=1e-3,
            atol=1e-3,
            needs=["supports_float16", "supports_16bit_buffer"],
        )
    )
    r = _rng(3)
    ma, mb = r.standard_normal((64, 32)).astype("float32"), r.standard_normal((32, 48)).astype("float32")
    out.append(
        Case(
            "matmul",
            "C[64,48] = A[64,32] @ B[32,48]; 16x16 tiles staged in shared memory, 2-D grid (3, 4) "
            "and workgroup; launch tags blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x",
            [
                KernelSpec(
                    "matmul_kernel",
                    "matmul.comp",
                    ["handle"] * 3,
                    ["blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"],
                )
            ],
            HostFn(
                "matmul",
                [Buf("a", "float32", [64, 32]), Buf("b", "float32", [32, 48]), Buf("c", "float32", [64, 48])],
                [Launch("matmul_kernel", ["a", "b", "c"], ["4", "3", "16", "16"])],
            ),
            [{"inputs": {"a": ma, "b": mb}, "outputs": {"c": ma @ mb}}],
            rtol=1e-4,
            atol=1e-4,
        )
    )
    r = _rng(4)
    rs = r.standard_normal((64, 256)).astype("float32")
    out.append(
        Case(
            "row_sum",
            "B[64] = sum(A[64,256], axis=1): one row per workgroup of 64, tree reduction in shared memory",
            [KernelSpec("row_sum_kernel", "row_sum.comp", ["handle"] * 2)],
            HostFn(
                "row_sum",
                [Buf("a", "float32", [64, 256]), Buf("b", "float32", [64])],
                [Launch("row_sum_kernel", ["a", "b"], ["64", "64"])],
            ),
            [{"inputs": {"a": rs}, "outputs": {"b": rs.sum(axis=1)}}],
            rtol=1e-4,
            atol=1e-4,
        )
    )
    r = _rng(5)
    dyn_calls = []
    for n in (17, 1000):
        x, y = r.standard_normal(n).astype("float32"), r.standard_normal(n).astype("float32")
        dyn_calls.append({"inputs": {"a": x, "b": y}, "outputs": {"c": x * y + np.float32(1)}})
    out.append(
        Case(
            "dyn_muladd",
            "symbolic n: C[n] = A[n] * B[n] + 1, called with n=17 and n=1000; n is an int32 kernel "
            "scalar in push constants, grid ceil(n/64)",
            [KernelSpec("dyn_muladd_kernel", "dyn_muladd.comp", ["handle"] * 3 + ["int32"])],
            HostFn(
                "dyn_muladd",
                [Buf("a", "float32", ["n"]), Buf("b", "float32", ["n"]), Buf("c", "float32", ["n"])],
                [Launch("dyn_muladd_kernel", ["a", "b", "c", "n"], ["(n + 63) / 64", "64"])],
            ),
            dyn_calls,
        )
    )
    r = _rng(6)
    wa, wb = r.standard_normal(512).astype("float32"), r.standard_normal(1024).astype("float32")
    out.append(
        Case(
            "workspace",
            "T[512,1024] = outer(A, B) in a 2 MiB workspace from TVMBackendAllocWorkspace(7, ...), "
            "C[1024] = sum_i T[i,:]**2; two kernels in one command batch",
            [
                KernelSpec("workspace_kernel", "workspace_kernel.comp", ["handle"] * 3),
                KernelSpec("workspace_kernel_1", "workspace_kernel_1.comp", ["handle"] * 2),
            ],
            HostFn(
                "workspace",
                [Buf("a", "float32", [512]), Buf("b", "float32", [1024]), Buf("c", "float32", [1024])],
                [
                    Launch("workspace_kernel", ["a", "b", "T"], ["8192", "64"]),
                    Launch("workspace_kernel_1", ["c", "T"], ["16", "64"]),
                ],
                workspaces={"T": 512 * 1024 * 4},
            ),
            [{"inputs": {"a": wa, "b": wb}, "outputs": {"c": (np.outer(wa, wb) ** 2).sum(axis=0)}}],
            rtol=1e-4,
            atol=1e-4,
        )
    )
    r = _rng(7)
    ma2, mb2 = r.standard_normal(256).astype("float32"), r.standard_normal(256).astype("float32")
    out.append(
        Case(
            "multi_out",
            "two outputs and two scalars in push constants: out1 = A * alpha + B, out2 = A - float(beta)",
            [KernelSpec("multi_out_kernel", "multi_out.comp", ["handle"] * 4 + ["float32", "int32"])],
            HostFn(
                "multi_out",
                [
                    Buf("a", "float32", [256]),
                    Buf("b", "float32", [256]),
                    Scalar("alpha", "float32"),
                    Scalar("beta", "int32"),
                    Buf("out1", "float32", [256]),
                    Buf("out2", "float32", [256]),
                ],
                [Launch("multi_out_kernel", ["a", "b", "out1", "out2", "alpha", "beta"], ["4", "64"])],
            ),
            [
                {
                    "inputs": {"a": ma2, "b": mb2},
                    "scalars": {"alpha": 1.5, "beta": 3},
                    "outputs": {"out1": ma2 * np.float32(1.5) + mb2, "out2": ma2 - np.float32(3)},
                }
            ],
        )
    )
    r = _rng(8)
    ta, tb = r.standard_normal(4).astype("float32"), r.standard_normal(4).astype("float32")
    out.append(
        Case(
            "tiny_add",
            "C = A + B over 4 elements, one workgroup of 4 (call-overhead benchmark)",
            [KernelSpec("tiny_add_kernel", "tiny_add.comp", ["handle"] * 3)],
            HostFn(
                "tiny_add",
                [Buf("a", "float32", [4]), Buf("b", "float32", [4]), Buf("c", "float32", [4])],
                [Launch("tiny_add_kernel", ["a", "b", "c"], ["1", "4"])],
            ),
            [{"inputs": {"a": ta, "b": tb}, "outputs": {"c": ta + tb}}],
        )
    )
    scalar_params = ["int32", "int64", "uint32", "float32", "float64"]
    scalar_values = {"sa": -5, "sb": 2**40 + 3, "sc": 2**32 - 1, "sd": 1.5, "se": 1e300}
    scalar_host = [Buf("oi", "int64", [3]), Buf("of", "float64", [2])] + [
        Scalar(n, t) for n, t in zip(scalar_values, scalar_params)
    ]
    scalar_out = {
        "oi": np.array([-5, 2**40 + 3, 2**32 - 1], dtype="int64"),
        "of": np.array([1.5, 1e300], dtype="float64"),
    }
    for name, ubo, what in (
        ("scalars", False, "push constants"),
        ("scalars_ubo", True, "a uniform buffer (flag kUseUBO)"),
    ):
        out.append(
            Case(
                name,
                f"int32, int64, uint32, float32 and float64 scalars through {what}, one 8-byte slot each",
                [
                    KernelSpec(
                        f"{name}_kernel", f"{name}.comp", ["handle"] * 2 + scalar_params, ["blockIdx.x"], ubo
                    )
                ],
                HostFn(name, scalar_host, [Launch(f"{name}_kernel", ["oi", "of", *scalar_values], ["1"])]),
                [{"inputs": {}, "scalars": scalar_values, "outputs": scalar_out}],
                needs=["supports_int64", "supports_float64"],
            )
        )
    many = {f"s{k}": float(k) * 0.25 - 2.0 for k in range(20)}
    out.append(
        Case(
            "many_scalars",
            "20 float32 scalars (160 bytes, more than push constants hold) in a uniform buffer",
            [
                KernelSpec(
                    "many_scalars_kernel",
                    "many_scalars.comp",
                    ["handle"] + ["float32"] * 20,
                    ["blockIdx.x"],
                    True,
                )
            ],
            HostFn(
                "many_scalars",
                [Buf("out", "float32", [20])] + [Scalar(k, "float32") for k in many],
                [Launch("many_scalars_kernel", ["out", *many], ["1"])],
            ),
            [
                {
                    "inputs": {},
                    "scalars": many,
                    "outputs": {
                        "out": np.array([v * (k + 1) for k, v in enumerate(many.values())], "float32")
                    },
                }
            ],
        )
    )
    z, y, x = np.meshgrid(np.arange(2), np.arange(10), np.arange(12), indexing="ij")
    tags3d = ["blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"]
    out.append(
        Case(
            "misc",
            "a 3-D grid of 3-D workgroups with the tirx.use_dyn_shared_memory tag (one extra packed "
            "argument), and a kernel whose unused buffer argument is NULL",
            [
                KernelSpec(
                    "grid3d_kernel", "grid3d.comp", ["handle"], tags3d + ["tirx.use_dyn_shared_memory"]
                ),
                KernelSpec("null_arg_kernel", "null_arg.comp", ["handle", "handle"], ["blockIdx.x"]),
            ],
            HostFn(
                "misc",
                [Buf("grid", "int32", [2, 10, 12]), Buf("flag", "int32", [1])],
                [
                    Launch("grid3d_kernel", ["grid"], ["3", "2", "2", "4", "5", "1", "1024"]),
                    Launch("null_arg_kernel", ["flag", "NULL"], ["1"]),
                ],
            ),
            [
                {
                    "inputs": {},
                    "outputs": {
                        "grid": (x * 10000 + y * 100 + z).astype("int32"),
                        "flag": np.array([7], "int32"),
                    },
                }
            ],
        )
    )
    r = _rng(9)
    ba, bb = r.standard_normal(4096).astype("float32"), r.standard_normal(4096).astype("float32")
    mat_a, mat_b = (
        r.standard_normal((128, 128)).astype("float32"),
        r.standard_normal((128, 128)).astype("float32"),
    )
    out.append(
        Case(
            "bench",
            "benchmark kernels, the same compute shaders as the wgpu peer benchmark: trivial (1 "
            "invocation), add4096 (workgroup 128), matmul128 (128^3, 8x8 workgroups, 32x32 tiles)",
            [
                KernelSpec("trivial_kernel", "trivial.comp", ["handle"], ["blockIdx.x"]),
                KernelSpec("add4096_kernel", "add4096.comp", ["handle"] * 3, ["blockIdx.x", "threadIdx.x"]),
                KernelSpec(
                    "matmul128_kernel",
                    "matmul128.comp",
                    ["handle"] * 3,
                    ["blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"],
                ),
            ],
            HostFn(
                "bench",
                [
                    Buf("one", "float32", [1]),
                    Buf("a", "float32", [4096]),
                    Buf("b", "float32", [4096]),
                    Buf("c", "float32", [4096]),
                    Buf("ma", "float32", [128, 128]),
                    Buf("mb", "float32", [128, 128]),
                    Buf("mc", "float32", [128, 128]),
                ],
                [
                    Launch("trivial_kernel", ["one"], ["1"]),
                    Launch("add4096_kernel", ["a", "b", "c"], ["32", "128"]),
                    Launch("matmul128_kernel", ["ma", "mb", "mc"], ["4", "4", "8", "8"]),
                ],
            ),
            [
                {
                    "inputs": {"a": ba, "b": bb, "ma": mat_a, "mb": mat_b},
                    "outputs": {
                        "one": np.array([1], "float32"),
                        "c": ba + bb,
                        "mc": mat_a @ mat_b,
                    },
                }
            ],
            rtol=1e-4,
            atol=1e-3,
        )
    )
    return out
