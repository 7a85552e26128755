"""Generate the TVM 0.27 test artifacts under ``tests/artifacts``.

This script is a *fixture generator*, not part of the runtime. Run it with a Python
that has ``apache-tvm==0.27.0.post1`` (and therefore ``apache-tvm-ffi``) and ``numpy``
installed, for example a separate virtual environment::

    python3 -m venv /tmp/venv-tvm027
    /tmp/venv-tvm027/bin/pip install apache-tvm==0.27.0.post1 numpy
    /tmp/venv-tvm027/bin/python tests/artifacts/generate.py [--out DIR]

apache-tvm is NOT a dependency of the runtime packages in this repository; only this
script imports it. It also needs a C toolchain (``export_library`` links with ``g++``)
and ``nm`` from binutils.

What it does, deterministically (fixed seeds; re-running gives byte-identical files,
except ``relax/mlp_dyn_*.so``, whose TVM-generated ``shape_func`` stores two heap slots in
a run-dependent order: upstream iterates an unordered map; the behaviour is the same):

* builds small TIR kernels for ``llvm`` (``cpu/``), ``opencl`` (``opencl/``) and
  ``cuda`` (``cuda/``; stored as CUDA C++ source, fmt ``"cuda"``, as no GPU is present),
* builds three Relax models for all three targets (``relax/``),
* writes inputs and numpy-computed expected outputs as ``.npz``,
* runs every CPU artifact with apache-tvm's own runtime and checks it against numpy;
  for GPU artifacts (which cannot run here) it runs the same unscheduled computation on
  CPU instead,
* writes ``manifest.json`` describing every case (see ``README.md`` beside this file).

``--check-opencl`` additionally runs every OpenCL TIR kernel through pyopencl on the
default OpenCL device (for example PoCL on the CPU: ``pip install pyopencl
pocl-binary-distribution``), launching it the way the host code would. It only prints a
report and never changes the written files.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tvm_ffi

import tvm
from tvm import relax, s_tir, te
from tvm.tirx import PrimFunc

TARGET_DIRS = ("cpu", "opencl", "cuda", "relax")
GPU_TARGETS = ("opencl", "cuda")
DEVICE_TYPE = {"cpu": 1, "cuda": 2, "opencl": 4}
GPU_THREADS = 64  # threads per block for element-wise GPU schedules


def make_target(target: str) -> tvm.target.Target:
    """Return the TVM target for one of ``cpu``, ``opencl``, ``cuda``."""
    if target == "cpu":
        return tvm.target.Target("llvm")
    if target == "cuda":
        # An explicit arch avoids the "Unable to detect CUDA version" warning; the
        # source is compiled for the real GPU at load time anyway.
        return tvm.target.Target({"kind": "cuda", "arch": "sm_75"}, host="llvm")
    if target == "opencl":
        return tvm.target.Target("opencl", host="llvm")
    raise ValueError(target)


# --------------------------------------------------------------------------------------
# Arguments and calls (mirrors the manifest schema)
# --------------------------------------------------------------------------------------


def arg_input(key: str) -> dict[str, Any]:
    return {"kind": "input", "key": key}


def arg_output(key: str) -> dict[str, Any]:
    # shape and dtype are filled in from the expected array when the call is finalized
    return {"kind": "output", "key": key}


def arg_scalar(value: float, dtype: str) -> dict[str, Any]:
    return {"kind": "scalar", "value": value, "dtype": dtype}


@dataclass
class Call:
    """One invocation: arrays (inputs and expected outputs) plus the argument list."""

    arrays: dict[str, np.ndarray]
    args: list[dict[str, Any]]
    outputs: list[str] = field(default_factory=list)  # VM cases only


@dataclass
class KernelCase:
    """A TIR kernel built for one or more targets from one te definition."""

    name: str
    description: str
    func: PrimFunc  # unscheduled, global_symbol == name
    calls: list[Call]
    rtol: float
    atol: float
    targets: tuple[str, ...] = ("cpu", "opencl", "cuda")
    schedule: dict[str, Callable[[s_tir.Schedule], None]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # extra per-target description


@dataclass
class ModelCase:
    """A Relax model built for each target."""

    name: str
    description: str
    mod: tvm.IRModule
    calls: list[Call]
    rtol: float
    atol: float
    output_is_tuple: bool
    targets: tuple[str, ...] = ("cpu", "opencl", "cuda")


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded from the case name: adding a case never changes the others."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def uniform(rng: np.random.Generator, shape: tuple[int, ...], dtype: str = "float32") -> np.ndarray:
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def finalize(name: str, f: PrimFunc) -> PrimFunc:
    return f.with_attr("global_symbol", name)


# --------------------------------------------------------------------------------------
# GPU schedule helpers
# --------------------------------------------------------------------------------------


def sched_elementwise(
    block: str, threads: int = GPU_THREADS, spatial: int | None = None
) -> Callable[[s_tir.Schedule], None]:
    """Fuse the (first ``spatial``) loops of ``block``, split by ``threads``, bind to
    blockIdx.x / threadIdx.x. Remaining (reduction) loops stay serial per thread."""

    def apply(sch: s_tir.Schedule) -> None:
        loops = sch.get_loops(sch.get_sblock(block))[:spatial]
        fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        bx, tx = sch.split(fused, [None, threads])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")

    return apply


def sched_chain(
    *fns: Callable[[s_tir.Schedule], None],
) -> Callable[[s_tir.Schedule], None]:
    def apply(sch: s_tir.Schedule) -> None:
        for fn in fns:
            fn(sch)

    return apply


def sched_row_reduce(block: str, threads: int) -> Callable[[s_tir.Schedule], None]:
    """One row per block; the reduction axis is split across ``threads`` threads."""

    def apply(sch: s_tir.Schedule) -> None:
        blk = sch.get_sblock(block)
        i, k = sch.get_loops(blk)
        _, ki = sch.split(k, [None, threads])
        sch.bind(i, "blockIdx.x")
        sch.bind(ki, "threadIdx.x")

    return apply


def sched_matmul_shared(tile: int = 16, ktile: int = 8) -> Callable[[s_tir.Schedule], None]:
    """Tiled matmul: tile x tile threads per block, A and B tiles in shared memory."""

    def apply(sch: s_tir.Schedule) -> None:
        blk = sch.get_sblock("C")
        i, j, k = sch.get_loops(blk)
        bi, ti = sch.split(i, [None, tile])
        bj, tj = sch.split(j, [None, tile])
        ko, _ = sch.split(k, [None, ktile])
        sch.reorder(bi, bj, ti, tj, ko)
        sch.bind(bi, "blockIdx.y")
        sch.bind(bj, "blockIdx.x")
        sch.bind(ti, "threadIdx.y")
        sch.bind(tj, "threadIdx.x")
        for read_idx in (0, 1):
            shared = sch.cache_read(blk, read_idx, "shared")
            sch.compute_at(shared, ko)
            fused = sch.fuse(*sch.get_loops(shared)[-2:])
            _, ty, tx = sch.split(fused, [None, tile, tile])
            sch.bind(ty, "threadIdx.y")
            sch.bind(tx, "threadIdx.x")
        sch.decompose_reduction(blk, ko)

    return apply


def sched_cpu_parallel(block: str) -> Callable[[s_tir.Schedule], None]:
    def apply(sch: s_tir.Schedule) -> None:
        loops = sch.get_loops(sch.get_sblock(block))
        sch.parallel(loops[0])

    return apply


# --------------------------------------------------------------------------------------
# TIR kernel definitions (te) with numpy references
# --------------------------------------------------------------------------------------


def case_add(name: str, n: int, dtype: str, rtol: float, atol: float, desc: str) -> KernelCase:
    a = te.placeholder((n,), dtype, name="A")
    b = te.placeholder((n,), dtype, name="B")
    c = te.compute((n,), lambda i: a[i] + b[i], name="C")
    rng = rng_for(name)
    x, y = uniform(rng, (n,), dtype), uniform(rng, (n,), dtype)
    call = Call({"a": x, "b": y, "c": x + y}, [arg_input("a"), arg_input("b"), arg_output("c")])
    threads = min(GPU_THREADS, n)
    return KernelCase(
        name,
        desc,
        finalize(name, te.create_prim_func([a, b, c])),
        [call],
        rtol,
        atol,
        schedule={t: sched_elementwise("C", threads) for t in GPU_TARGETS},
    )


def case_matmul() -> KernelCase:
    name, m, k, n = "matmul", 64, 32, 48
    a = te.placeholder((m, k), "float32", name="A")
    b = te.placeholder((k, n), "float32", name="B")
    r = te.reduce_axis((0, k), "k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    rng = rng_for(name)
    x, y = uniform(rng, (m, k)), uniform(rng, (k, n))
    ref = (x.astype("float64") @ y.astype("float64")).astype("float32")
    call = Call({"a": x, "b": y, "c": ref}, [arg_input("a"), arg_input("b"), arg_output("c")])
    return KernelCase(
        name,
        f"fp32 matmul C[{m},{n}] = A[{m},{k}] @ B[{k},{n}]",
        finalize(name, te.create_prim_func([a, b, c])),
        [call],
        1e-4,  # rtol: reduction order differs between targets
        1e-4,
        schedule={t: sched_matmul_shared() for t in GPU_TARGETS},
        notes={
            t: "; GPU schedule: 16x16 tiles, 256 threads (threadIdx.x/y), A and B "
            "tiles in shared memory (__shared__ / __local), blockIdx.x/y grid 3x4"
            for t in GPU_TARGETS
        },
    )


def case_row_sum() -> KernelCase:
    name, rows, cols = "row_sum", 64, 256
    a = te.placeholder((rows, cols), "float32", name="A")
    r = te.reduce_axis((0, cols), "k")
    b = te.compute((rows,), lambda i: te.sum(a[i, r], axis=r), name="B")
    rng = rng_for(name)
    x = uniform(rng, (rows, cols))
    ref = x.astype("float64").sum(axis=1).astype("float32")
    call = Call({"a": x, "b": ref}, [arg_input("a"), arg_output("b")])
    return KernelCase(
        name,
        f"row sum over axis 1: B[{rows}] = sum(A[{rows},{cols}], axis=1)",
        finalize(name, te.create_prim_func([a, b])),
        [call],
        1e-4,  # rtol: reduction order differs between targets
        1e-4,
        schedule={
            # 32 threads = one warp: CUDA lowers the allreduce to __shfl_down_sync
            "cuda": sched_row_reduce("B", 32),
            # OpenCL (thread_warp_size 1): allreduce through __local memory and barriers
            "opencl": sched_row_reduce("B", 64),
        },
        notes={
            "cuda": "; GPU schedule: one row per block, 32 threads, cross-thread "
            "reduction lowered to warp shuffles (__shfl_down_sync)",
            "opencl": "; GPU schedule: one row per work-group, 64 work-items, "
            "cross-thread reduction through __local memory + barriers",
        },
    )


def case_dyn_muladd() -> KernelCase:
    name = "dyn_muladd"
    n = te.var("n")
    a = te.placeholder((n,), "float32", name="A")
    b = te.placeholder((n,), "float32", name="B")
    c = te.compute((n,), lambda i: a[i] * b[i] + tvm.tirx.const(1.0, "float32"), name="C")
    rng = rng_for(name)
    calls = []
    for size in (17, 1000):
        x, y = uniform(rng, (size,)), uniform(rng, (size,))
        ref = x * y + np.float32(1.0)
        sfx = f"_n{size}"
        calls.append(
            Call(
                {"a" + sfx: x, "b" + sfx: y, "c" + sfx: ref},
                [arg_input("a" + sfx), arg_input("b" + sfx), arg_output("c" + sfx)],
            )
        )
    return KernelCase(
        name,
        "symbolic shape: C[n] = A[n] * B[n] + 1 (n is a symbolic var; called with n=17 and n=1000)",
        finalize(name, te.create_prim_func([a, b, c])),
        calls,
        1e-6,
        1e-6,
        schedule={t: sched_elementwise("C") for t in GPU_TARGETS},
        notes={
            t: "; the device kernel takes n as an extra int32 argument; grid = ceil(n/64)"
            for t in GPU_TARGETS
        },
    )


def case_parallel() -> KernelCase:
    name, n = "parallel_scale", 256
    a = te.placeholder((n, n), "float32", name="A")
    b = te.compute(
        (n, n),
        lambda i, j: a[i, j] * tvm.tirx.const(2.0, "float32") + tvm.tirx.const(1.0, "float32"),
        name="B",
    )
    rng = rng_for(name)
    # multiples of 1/16 are exact in fp32 and keep the 256 KiB arrays compressible
    x = (rng.integers(-64, 64, size=(n, n)) / 16).astype("float32")
    call = Call(
        {"a": x, "b": x * np.float32(2.0) + np.float32(1.0)},
        [arg_input("a"), arg_output("b")],
    )
    return KernelCase(
        name,
        f"B[{n},{n}] = A * 2 + 1 with the outer loop parallel (calls __TVMBackendParallelLaunch)",
        finalize(name, te.create_prim_func([a, b])),
        [call],
        1e-6,
        1e-6,
        targets=("cpu",),
        schedule={"cpu": sched_cpu_parallel("B")},
    )


def case_workspace() -> KernelCase:
    name, m, n = "workspace", 512, 1024
    a = te.placeholder((m,), "float32", name="A")
    b = te.placeholder((n,), "float32", name="B")
    t = te.compute((m, n), lambda i, j: a[i] * b[j], name="T")
    r = te.reduce_axis((0, m), "k")
    c = te.compute((n,), lambda j: te.sum(t[r, j] * t[r, j], axis=r), name="C")
    rng = rng_for(name)
    x, y = uniform(rng, (m,)), uniform(rng, (n,))
    outer = x.astype("float64")[:, None] * y.astype("float64")[None, :]
    ref = (outer * outer).sum(axis=0).astype("float32")
    call = Call({"a": x, "b": y, "c": ref}, [arg_input("a"), arg_input("b"), arg_output("c")])
    gpu = sched_chain(sched_elementwise("T"), sched_elementwise("C", spatial=1))
    return KernelCase(
        name,
        f"T[{m},{n}] = outer(A, B) kept in a {m * n * 4}-byte intermediate buffer, "
        f"C[{n}] = sum_i T[i,:]**2; the intermediate is allocated with "
        "__TVMBackendAllocWorkspace",
        finalize(name, te.create_prim_func([a, b, c])),
        [call],
        1e-4,  # rtol: reduction order differs between targets
        1e-4,
        schedule={tt: gpu for tt in GPU_TARGETS},
        notes={
            tt: "; two device kernels; the intermediate is a device buffer that host "
            "code allocates with __TVMBackendAllocWorkspace"
            f"({DEVICE_TYPE[tt]}, dev_id, {m * n * 4}, 2, 32)"
            for tt in GPU_TARGETS
        },
    )


def case_multi_out() -> KernelCase:
    name, n = "multi_out", 256
    a = te.placeholder((n,), "float32", name="A")
    b = te.placeholder((n,), "float32", name="B")
    alpha = te.var("alpha", "float32")
    beta = te.var("beta", "int32")
    o1, o2 = te.compute((n,), lambda i: (a[i] * alpha + b[i], a[i] - beta.astype("float32")), name="O")
    rng = rng_for(name)
    x, y = uniform(rng, (n,)), uniform(rng, (n,))
    alpha_v, beta_v = 1.5, 3
    call = Call(
        {
            "a": x,
            "b": y,
            "out1": x * np.float32(alpha_v) + y,
            "out2": x - np.float32(beta_v),
        },
        [
            arg_input("a"),
            arg_input("b"),
            arg_scalar(alpha_v, "float32"),
            arg_scalar(beta_v, "int32"),
            arg_output("out1"),
            arg_output("out2"),
        ],
    )
    return KernelCase(
        name,
        "two outputs and two scalars: out1 = A * alpha + B, out2 = A - float(beta) "
        "(alpha: float32, beta: int32), one loop/kernel writes both outputs",
        finalize(name, te.create_prim_func([a, b, alpha, beta, o1, o2])),
        [call],
        1e-6,
        1e-6,
        schedule={t: sched_elementwise("O_v0") for t in GPU_TARGETS},
    )


def kernel_cases() -> list[KernelCase]:
    cases = [
        case_add(
            "add",
            1024,
            "float32",
            1e-6,
            1e-6,
            "element-wise C = A + B, fp32, static shape 1024",
        ),
        case_add(
            "add_fp16",
            1024,
            "float16",
            1e-3,
            1e-3,
            "element-wise C = A + B, fp16, static shape 1024",
        ),
        case_matmul(),
        case_row_sum(),
        case_dyn_muladd(),
        case_parallel(),
        case_workspace(),
        case_multi_out(),
        case_add(
            "tiny_add",
            4,
            "float32",
            1e-6,
            1e-6,
            "tiny C = A + B of 4 fp32 elements (call-overhead benchmark)",
        ),
    ]
    return cases


# --------------------------------------------------------------------------------------
# Relax models
# --------------------------------------------------------------------------------------


def _f32(shape: list[Any]) -> relax.TensorType:
    return relax.TensorType(shape, "float32")


def mlp_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": uniform(rng, (16, 32)) * np.float32(0.5),
        "b1": uniform(rng, (32,)) * np.float32(0.1),
        "w2": uniform(rng, (32, 8)) * np.float32(0.5),
        "b2": uniform(rng, (8,)) * np.float32(0.1),
    }


def mlp_ref(x: np.ndarray, p: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    d = {k: v.astype("float64") for k, v in p.items()}
    h = np.maximum(x.astype("float64") @ d["w1"] + d["b1"], 0.0)
    y = h @ d["w2"] + d["b2"]
    return y.astype("float32"), h.astype("float32")


def build_mlp(batch: int | tvm.tirx.Var, return_hidden: bool) -> tvm.IRModule:
    bb = relax.BlockBuilder()
    x = relax.Var("x", _f32([batch, 16]))
    w1 = relax.Var("w1", _f32([16, 32]))
    b1 = relax.Var("b1", _f32([32]))
    w2 = relax.Var("w2", _f32([32, 8]))
    b2 = relax.Var("b2", _f32([8]))
    with bb.function("main", [x, w1, b1, w2, b2]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.relu(relax.op.add(relax.op.matmul(x, w1), b1)))
            y = bb.emit(relax.op.add(relax.op.matmul(h, w2), b2))
            out = bb.emit_output(relax.Tuple([y, h]) if return_hidden else y)
        bb.emit_func_output(out)
    return bb.get()


def model_mlp() -> ModelCase:
    name = "mlp"
    rng = rng_for(name)
    p = mlp_params(rng)
    x = uniform(rng, (4, 16))
    y, _ = mlp_ref(x, p)
    args = [arg_input(k) for k in ("x", "w1", "b1", "w2", "b2")]
    return ModelCase(
        name,
        "MLP 16->32->8 (matmul+bias+relu, matmul+bias), static batch 4, weights "
        "passed as function arguments; returns logits [4,8]",
        build_mlp(4, return_hidden=False),
        [Call({"x": x, **p, "y": y}, args, outputs=["y"])],
        1e-4,  # rtol: reduction order differs between targets
        1e-4,
        output_is_tuple=False,
    )


def model_mlp_dyn() -> ModelCase:
    name = "mlp_dyn"
    rng = rng_for(name)
    p = mlp_params(rng)
    calls = []
    for batch in (3, 50):
        x = uniform(rng, (batch, 16))
        y, h = mlp_ref(x, p)
        sfx = f"_n{batch}"
        calls.append(
            Call(
                {"x" + sfx: x, **p, "logits" + sfx: y, "hidden" + sfx: h},
                [arg_input("x" + sfx)] + [arg_input(k) for k in ("w1", "b1", "w2", "b2")],
                outputs=["logits" + sfx, "hidden" + sfx],
            )
        )
    return ModelCase(
        name,
        "MLP 16->32->8 with symbolic batch n (called with n=3 and n=50), weights as "
        "arguments; returns the tuple (logits [n,8], relu hidden [n,32])",
        build_mlp(tvm.tirx.Var("n", "int64"), return_hidden=True),
        calls,
        1e-4,  # rtol: reduction order differs between targets
        1e-4,
        output_is_tuple=True,
    )


def conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, wd: np.ndarray, bd: np.ndarray) -> np.ndarray:
    xd = np.pad(x.astype("float64"), ((0, 0), (0, 0), (1, 1), (1, 1)))
    n, _, hh, ww = x.shape
    co = w.shape[0]
    out = np.zeros((n, co, hh, ww))
    for dy in range(3):
        for dx in range(3):
            patch = xd[:, :, dy : dy + hh, dx : dx + ww]  # n, ci, h, w
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, dy, dx].astype("float64"))
    out += b.astype("float64")[None, :, None, None]
    pooled = np.maximum(out, 0.0).mean(axis=(2, 3))
    return (pooled @ wd.astype("float64") + bd.astype("float64")).astype("float32")


def model_convnet() -> ModelCase:
    name = "convnet"
    rng = rng_for(name)
    w = uniform(rng, (4, 3, 3, 3)) * np.float32(0.5)
    b = uniform(rng, (4,)) * np.float32(0.1)
    wd = uniform(rng, (4, 5))
    bd = uniform(rng, (5,)) * np.float32(0.1)
    x = uniform(rng, (1, 3, 8, 8))
    bb = relax.BlockBuilder()
    xv = relax.Var("x", _f32([1, 3, 8, 8]))
    with bb.function("main", [xv]):
        with bb.dataflow():
            c = bb.emit(relax.op.nn.conv2d(xv, relax.const(w), padding=[1, 1]))
            c = bb.emit(relax.op.add(c, relax.const(b.reshape(1, 4, 1, 1))))
            r = bb.emit(relax.op.nn.relu(c))
            p = bb.emit(relax.op.mean(r, axis=[2, 3]))
            d = bb.emit(relax.op.matmul(p, relax.const(wd)))
            out = bb.emit_output(relax.op.add(d, relax.const(bd)))
        bb.emit_func_output(out)
    return ModelCase(
        name,
        "conv2d 3->4 channels 3x3 pad 1 + bias + relu + global average pool + dense "
        "4->5, input [1,3,8,8], all weights embedded as constants; returns [1,5]",
        bb.get(),
        [
            Call(
                {"x": x, "y": conv_ref(x, w, b, wd, bd)},
                [arg_input("x")],
                outputs=["y"],
            )
        ],
        1e-4,  # rtol: reduction order differs between targets
        1e-4,
        output_is_tuple=False,
    )


def model_cases() -> list[ModelCase]:
    return [model_mlp(), model_mlp_dyn(), model_convnet()]


# --------------------------------------------------------------------------------------
# Inspection helpers
# --------------------------------------------------------------------------------------


def dynamic_symbols(path: Path) -> list[str]:
    """Defined dynamic symbols of a shared object (``nm -D --defined-only``)."""
    out = subprocess.run(
        ["nm", "-D", "--defined-only", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


def symbol_info(path: Path) -> dict[str, list[str]]:
    names = dynamic_symbols(path)
    return {
        # loader-filled context pointers (section 1.3/1.4 of tvm-0.27-abi.md)
        "context_symbols": [n for n in names if n.startswith("__TVM")],
        # exported entry points and __tvm_ffi__library_bin / __tvm_ffi__library_ctx
        "tvm_ffi_symbols": [n for n in names if n.startswith("__tvm_ffi_")],
    }


def walk_modules(mod: tvm.runtime.Module) -> list[tvm.runtime.Module]:
    found = [mod]
    for imp in mod.imports:
        found.extend(walk_modules(imp))
    return found


_WS_CALL = re.compile(r"call ptr %[\w.]+\(i32 (\d+), i32 [^,]+, i64 (%?[\w.]+), i32 \d+, i32 \d+\)")
_CL_KERNEL = re.compile(r"__kernel void (\w+)\(")
_CU_KERNEL = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(')


def inspect_built(mod: tvm.runtime.Module) -> dict[str, Any]:
    """Device kernel names and workspace allocations seen in the host LLVM IR."""
    kernels: list[str] = []
    workspace: list[dict[str, Any]] = []
    device_kind = None
    for m in walk_modules(mod):
        if m.kind == "llvm":
            for dev, nbytes in _WS_CALL.findall(m.inspect_source("ll")):
                size = int(nbytes) if nbytes.isdigit() else None
                workspace.append({"device_type": int(dev), "nbytes": size})
        elif m.kind in ("opencl", "cuda"):
            device_kind = m.kind
            pattern = _CL_KERNEL if m.kind == "opencl" else _CU_KERNEL
            for k in pattern.findall(m.inspect_source()):
                if k not in kernels:
                    kernels.append(k)
    info: dict[str, Any] = {"workspace_allocs": workspace}
    if device_kind is not None:
        info["device_module"] = device_kind
        info["device_kernels"] = kernels
    return info


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------


def fresh_output_dir(out: Path) -> bool:
    """Create ``out`` and remove the ``.so``/``.npz`` of an earlier run (the generators beside
    this one); False, after saying why, when ``g++`` (which export_library links with) is
    missing."""
    if shutil.which("g++") is None:
        print("error: g++ is required (export_library links with it)", file=sys.stderr)
        return False
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("*.so"), *out.glob("*.npz")]:
        stale.unlink()
    print(f"apache-tvm {tvm.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, numpy {np.__version__}")
    return True


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Byte-deterministic ``np.savez_compressed`` (fixed timestamps, sorted keys)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())


def call_json(npz: str, call: Call, vm: bool) -> dict[str, Any]:
    args = []
    for a in call.args:
        a = dict(a)
        if a["kind"] == "output":
            arr = call.arrays[a["key"]]
            a["shape"] = list(arr.shape)
            a["dtype"] = str(arr.dtype)
        args.append(a)
    out: dict[str, Any] = {"npz": npz, "args": args}
    if vm:
        out["outputs"] = list(call.outputs)
    return out


def merged_arrays(calls: list[Call]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for c in calls:
        for k, v in c.arrays.items():
            if k in arrays and not np.array_equal(arrays[k], v):
                raise ValueError(f"npz key {k} defined twice with different values")
            arrays[k] = v
    return arrays


# --------------------------------------------------------------------------------------
# Verification with apache-tvm (CPU only)
# --------------------------------------------------------------------------------------


def run_kernel_cpu(fn: Any, call: Call) -> dict[str, np.ndarray]:
    dev = tvm.cpu(0)
    packed: list[Any] = []
    outs: dict[str, Any] = {}
    for a in call.args:
        if a["kind"] == "input":
            packed.append(tvm.runtime.tensor(call.arrays[a["key"]], dev))
        elif a["kind"] == "output":
            ref = call.arrays[a["key"]]
            t = tvm.runtime.empty(ref.shape, str(ref.dtype), dev)
            outs[a["key"]] = t
            packed.append(t)
        else:
            packed.append(a["value"])
    fn(*packed)
    return {k: t.numpy() for k, t in outs.items()}


def check(label: str, got: dict[str, np.ndarray], call: Call, rtol: float, atol: float) -> None:
    for key, value in got.items():
        np.testing.assert_allclose(
            value.astype("float64"),
            call.arrays[key].astype("float64"),
            rtol=rtol,
            atol=atol,
            err_msg=f"{label}: output {key}",
        )


def run_vm_cpu(mod: tvm.runtime.Module, call: Call, is_tuple: bool) -> dict[str, np.ndarray]:
    dev = tvm.cpu(0)
    vm = relax.VirtualMachine(mod, dev)
    inputs = [tvm.runtime.tensor(call.arrays[a["key"]], dev) for a in call.args]
    res = vm["main"](*inputs)
    results = list(res) if is_tuple else [res]
    if len(results) != len(call.outputs):
        raise AssertionError(f"expected {len(call.outputs)} outputs, got {len(results)}")
    return {k: r.numpy() for k, r in zip(call.outputs, results, strict=True)}


def check_model_on_cpu(out: Path, case: ModelCase) -> None:
    """The reference a GPU model artifact is verified against: the same Relax model compiled for
    the CPU, run on apache-tvm's VM and checked against numpy (the CPU copy is not kept)."""
    cpu_path = out / f"_{case.name}_cpu_ref.so"
    tvm.compile(case.mod, target=make_target("cpu")).export_library(str(cpu_path))
    cpu = tvm.runtime.load_module(str(cpu_path))
    for call in case.calls:
        label = f"{case.name} (cpu reference)"
        check(label, run_vm_cpu(cpu, call, case.output_is_tuple), call, case.rtol, case.atol)
    cpu_path.unlink()


def gpu_model_entry(
    out: Path, case: ModelCase, built: Any, target: str, details: Callable[..., dict[str, Any]]
) -> dict[str, Any]:
    """Writes a GPU model artifact (``<out.name>/<case>.so`` and its npz) and returns its manifest
    entry; ``details(out, rel_so, built)`` adds what the backend's generator knows (device module,
    kernels)."""
    rel_so, rel_npz = f"{out.name}/{case.name}.so", f"{out.name}/{case.name}.npz"
    built.export_library(str(out.parent / rel_so))
    save_npz(out.parent / rel_npz, merged_arrays(case.calls))
    print(f"  {rel_so:24s} {(out.parent / rel_so).stat().st_size:8d} bytes")
    description = case.description + "; default pipeline (dlight GPU schedules)"
    entry = vm_case_entry(case, target, rel_so, rel_npz, description, "cpu-equivalent")
    return {**entry, **details(out, rel_so, built)}


def vm_case_entry(
    case: ModelCase, target: str, rel_so: str, rel_npz: str, description: str, verified: str
) -> dict[str, Any]:
    """The manifest fields every Relax model artifact has (tests/artifacts/README.md)."""
    return {
        "name": case.name,
        "target": target,
        "kind_of_case": "vm",
        "file": rel_so,
        "function": "main",
        "output_is_tuple": case.output_is_tuple,
        "calls": [call_json(rel_npz, c, vm=True) for c in case.calls],
        "rtol": case.rtol,
        "atol": case.atol,
        "description": description,
        "verified": verified,
    }


# --------------------------------------------------------------------------------------
# Optional: run the OpenCL kernels on a CPU OpenCL implementation (PoCL) via pyopencl
# --------------------------------------------------------------------------------------

_CL_PARAM = re.compile(r"(__global \w+\* restrict|float|int|half) (\w+)")
_LAUNCH = re.compile(r'T\.launch_thread\("(\w+)\.([xyz])", (.+?)\)(?: as \w+:)?$')
_SCALAR_NP = {"float": np.float32, "int": np.int32}


class OpenCLChecker:
    """Runs each OpenCL TIR kernel with pyopencl, mimicking what the host code does.

    Launch extents and intermediate buffer sizes come from the lowered device IR; kernel
    parameters come from the OpenCL source. Only used with ``--check-opencl``; the result
    is printed and does not change any written file.
    """

    def __init__(self) -> None:
        import pyopencl as cl  # optional dependency, imported only here

        self.cl = cl
        self.ctx = cl.create_some_context(interactive=False)
        self.queue = cl.CommandQueue(self.ctx)
        self.device = self.ctx.devices[0]
        self.report: list[str] = []

    def device_ir(self, mod: tvm.IRModule) -> tvm.IRModule:
        from tvm.tirx.build import split_host_device_mods

        target = make_target("opencl")
        mod = tvm.tirx.transform.BindTarget(target)(mod)
        pipeline, _, _ = tvm.tirx.get_default_tir_pipeline(target)
        _, devs = split_host_device_mods(pipeline(mod))
        (dev_mod,) = devs.values()
        return dev_mod

    def check(self, case: KernelCase, mod: tvm.IRModule, built: Any) -> None:
        cl = self.cl
        (dev_rt,) = [m for m in walk_modules(built.mod) if m.kind == "opencl"]
        source = dev_rt.inspect_source()
        dev_ir = self.device_ir(mod)
        pieces = [p for p in source.split("// Function: ") if p.strip()]
        kernels = []
        for piece in pieces:
            name, body = piece.split("\n", 1)
            name = name.strip()
            try:
                prg = cl.Program(self.ctx, body).build()
            except cl.RuntimeError as err:
                if "half" in piece and "cl_khr_fp16" not in self.device.extensions:
                    self.report.append(f"opencl/{case.name}: skipped (no cl_khr_fp16)")
                    return
                raise RuntimeError(f"{case.name}: OpenCL build failed: {err}") from err
            sig = re.search(r"__kernel void " + name + r"\(([^)]*)\)", body)
            if sig is None:
                raise RuntimeError(f"{case.name}: no signature for {name}")
            params = _CL_PARAM.findall(sig.group(1))
            kernels.append((name, getattr(prg, name), params, dev_ir[name].script()))
        for call in case.calls:
            self._run_call(case, call, kernels)
        self.report.append(f"opencl/{case.name}: ok on {self.device.name}")

    def _run_call(self, case: KernelCase, call: Call, kernels: list[Any]) -> None:
        cl = self.cl
        mf = cl.mem_flags
        env: dict[str, Any] = {}
        bufs: dict[str, Any] = {}
        outputs: dict[str, tuple[Any, np.ndarray]] = {}
        for param, arg in zip(case.func.params, call.args, strict=True):
            if arg["kind"] == "scalar":
                env[param.name] = arg["value"]
                continue
            buf = param  # TVM 0.27 buffer params carry .name and .shape themselves
            arr = call.arrays[arg["key"]]
            for dim, size in zip(buf.shape, arr.shape, strict=True):
                if isinstance(dim, tvm.tirx.Var):
                    env[dim.name] = size
            if arg["kind"] == "input":
                mem = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr)
            else:
                mem = cl.Buffer(self.ctx, mf.READ_WRITE, size=arr.nbytes)
                outputs[arg["key"]] = (mem, np.empty_like(arr))
            bufs[buf.name.replace(".", "_") + "_ptr"] = mem
        for name, kernel, params, script in kernels:
            grid, block = [1, 1, 1], [1, 1, 1]
            for line in script.splitlines():
                m = _LAUNCH.search(line.strip())
                if m:
                    extent = int(eval(m.group(3), {"__builtins__": {}}, dict(env)))
                    dims = grid if m.group(1) == "blockIdx" else block
                    dims["xyz".index(m.group(2))] = extent
            args: list[Any] = []
            for ctype, pname in params:
                if ctype.startswith("__global"):
                    if pname not in bufs:  # intermediate (workspace) buffer
                        decl = re.search(
                            r"T\.decl_buffer\(\(([\d, ]+)\),(?: \"(\w+)\",)? data=" + re.escape(pname),
                            script,
                        )
                        if decl is None:
                            raise RuntimeError(f"{name}: cannot size {pname}")
                        numel = int(np.prod([int(v) for v in decl.group(1).split(",") if v]))
                        nbytes = numel * np.dtype(decl.group(2) or "float32").itemsize
                        bufs[pname] = cl.Buffer(self.ctx, mf.READ_WRITE, size=nbytes)
                    args.append(bufs[pname])
                else:
                    args.append(_SCALAR_NP[ctype](env[pname]))
            ndim = max(i + 1 for i in range(3) if grid[i] * block[i] > 1 or i == 0)
            gsize = tuple(grid[i] * block[i] for i in range(ndim))
            kernel(self.queue, gsize, tuple(block[:ndim]), *args)
        got = {}
        for key, (mem, host) in outputs.items():
            cl.enqueue_copy(self.queue, host, mem)
            got[key] = host
        self.queue.finish()
        check(f"opencl/{case.name} on {self.device.name}", got, call, case.rtol, case.atol)


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def build_kernels(out: Path, manifest: list[dict[str, Any]], ocl: OpenCLChecker | None) -> None:
    for case in kernel_cases():
        # The unscheduled computation on CPU is the reference for the GPU artifacts.
        cpu_ref = tvm.compile(case.func, target=make_target("cpu"))
        for call in case.calls:
            check(
                f"{case.name} (cpu reference)",
                run_kernel_cpu(cpu_ref[case.name], call),
                call,
                case.rtol,
                case.atol,
            )

        for target in case.targets:
            sch = s_tir.Schedule(case.func)
            if target in case.schedule:
                case.schedule[target](sch)
            built = tvm.compile(sch.mod, target=make_target(target))
            if target == "opencl" and ocl is not None:
                ocl.check(case, sch.mod, built)
            rel_so = f"{target}/{case.name}.so"
            rel_npz = f"{target}/{case.name}.npz"
            built.export_library(str(out / rel_so))
            save_npz(out / rel_npz, merged_arrays(case.calls))
            verified = "cpu-equivalent"
            if target == "cpu":
                loaded = tvm.runtime.load_module(str(out / rel_so))
                for call in case.calls:
                    got = run_kernel_cpu(loaded[case.name], call)
                    check(f"{rel_so}", got, call, case.rtol, case.atol)
                verified = "artifact"
            entry: dict[str, Any] = {
                "name": case.name,
                "target": target,
                "kind_of_case": "kernel",
                "file": rel_so,
                "function": case.name,
                "calls": [call_json(rel_npz, c, vm=False) for c in case.calls],
                "rtol": case.rtol,
                "atol": case.atol,
                "description": case.description + case.notes.get(target, ""),
                "verified": verified,
                **symbol_info(out / rel_so),
            }
            entry.update(inspect_built(built.mod))
            manifest.append(entry)
            print(f"  {rel_so:28s} {(out / rel_so).stat().st_size:8d} bytes  {verified}")


def build_models(out: Path, manifest: list[dict[str, Any]]) -> None:
    for case in model_cases():
        rel_npz = f"relax/{case.name}.npz"
        save_npz(out / rel_npz, merged_arrays(case.calls))
        for target in case.targets:
            built = tvm.compile(case.mod, target=make_target(target))
            rel_so = f"relax/{case.name}_{target}.so"
            built.export_library(str(out / rel_so))
            verified = "cpu-equivalent"
            if target == "cpu":
                loaded = tvm.runtime.load_module(str(out / rel_so))
                for call in case.calls:
                    check(
                        rel_so,
                        run_vm_cpu(loaded, call, case.output_is_tuple),
                        call,
                        case.rtol,
                        case.atol,
                    )
                verified = "artifact"
            entry = vm_case_entry(case, target, rel_so, rel_npz, case.description, verified)
            entry.update(symbol_info(out / rel_so))
            entry.update(inspect_built(built.mod))
            manifest.append(entry)
            print(f"  {rel_so:28s} {(out / rel_so).stat().st_size:8d} bytes  {verified}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="output directory (default: the directory of this script)",
    )
    parser.add_argument(
        "--check-opencl",
        action="store_true",
        help="also run the OpenCL kernels with pyopencl on the default OpenCL device "
        "(e.g. PoCL on the CPU); needs pyopencl; does not change the written files",
    )
    ns = parser.parse_args(argv)
    out: Path = ns.out.resolve()
    if shutil.which("nm") is None:
        print("error: nm (binutils) is required", file=sys.stderr)
        return 2
    for sub in TARGET_DIRS:
        d = out / sub
        d.mkdir(parents=True, exist_ok=True)
        for stale in [*d.glob("*.so"), *d.glob("*.npz")]:
            stale.unlink()

    print(f"apache-tvm {tvm.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, numpy {np.__version__}")
    manifest: list[dict[str, Any]] = []
    ocl = OpenCLChecker() if ns.check_opencl else None
    build_kernels(out, manifest, ocl)
    build_models(out, manifest)
    doc = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        "paths_relative_to": "the directory holding manifest.json",
        "targets": {
            t: {
                "device_type": DEVICE_TYPE[t],
                "tvm_target": json.loads(str(make_target(t))),
            }
            for t in ("cpu", "opencl", "cuda")
        },
        "cases": manifest,
    }
    (out / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")
    total = sum(p.stat().st_size for sub in TARGET_DIRS for p in (out / sub).iterdir())
    if ocl is not None:
        print("OpenCL check:\n  " + "\n  ".join(ocl.report))
    print(f"wrote {len(manifest)} cases, {total} bytes of artifacts to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
