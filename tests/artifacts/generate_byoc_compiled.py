"""Generate ``tests/artifacts/byoc_compiled``: Relax models offloaded by apache-tvm's own external
codegens, ``relax.ext.dnnl``, ``relax.ext.cublas`` and ``relax.ext.cudnn``.

A fixture generator, not part of the runtime.  It needs apache-tvm built from source with those
codegens (PyPI's wheel has none); ``nox -s byoc-fixtures`` builds that compiler once
(tests/artifacts/compiler/build_apache_tvm.py, cached outside the repository) and runs::

    <cache>/python tests/artifacts/generate_byoc_compiled.py --cuda-codegens <libtvm_cuda_codegens.so>

(without ``--cuda-codegens`` only the DNNL artifacts are made).  Unlike tests/artifacts/byoc
(hand-assembled payloads), everything in these artifacts is the compiler's output: the
partitioning (for DNNL ``FuseOpsByPattern`` with the conv2d composites of apache-tvm's DNNL test
and ``MergeCompositeFunctions``, which merges only ``main``, hence one model per DNNL artifact;
``partition_for_cublas``; ``partition_for_cudnn``), ``RunCodegen`` (the JSON serializers, the
constant names, the modules), ``tvm.compile`` and ``export_library``
(``relax.VMExecutable -> const_loader -> [<kind>_json..., _lib]``).

The DNNL models are run by the source build's own runtime (its DNNL JSON runtime over Debian's
oneDNN) and checked against numpy before anything is written; the CUDA ones cannot run here
(no GPU), so numpy is their only oracle.  ``expected.npz`` holds the inputs
(``<prefix>:<case>:<input>``) and numpy's outputs (``<prefix>_out:<case>``), ``manifest.json``
the compiler, the module trees and what each function offloads.  Fixed seeds: the content is
byte-identical on regeneration with the same compiler build (checked).
"""

from __future__ import annotations

import argparse
import ctypes
import json
from pathlib import Path
from typing import Any, Callable

import ml_dtypes
import numpy as np

import tvm
from tvm import relax
from tvm.relax.dpl import make_fused_bias_activation_pattern

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(2027)
DQ_SCALE = 0.5

# Most specific first: FuseOpsByPattern takes the first pattern that matches a root.
PATTERNS = [
    (
        f"dnnl.conv2d{'_bias' if bias else ''}{'_' + act if act else ''}",
        make_fused_bias_activation_pattern(
            "relax.nn.conv2d", with_bias=bias, activation=f"relax.nn.{act}" if act else None
        ),
    )
    for bias in (True, False)
    for act in ("relu", None)
]


def rand(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype("float32")


# ---- numpy references (im2col; independent of the compiler and of our runtime) --------------


def conv2d(x, w, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    x = np.pad(x.astype("float64"), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    span = ((kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1)
    win = np.lib.stride_tricks.sliding_window_view(x, span, axis=(2, 3))
    win = win[:, :, :: strides[0], :: strides[1], :: dilation[0], :: dilation[1]]
    og = o // groups
    outs = [
        np.einsum("nchwij,ocij->nohw", win[:, g * cg : (g + 1) * cg], w[g * og : (g + 1) * og])
        for g in range(groups)
    ]
    return np.concatenate(outs, axis=1)


def relu(v):
    return np.maximum(v, 0)


def max_pool2x2(v):
    n, c, h, w = v.shape
    return v.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def softmax(v):
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---- models -----------------------------------------------------------------------------------


class Case:
    """One Relax function of an artifact: its run-time inputs and numpy's output."""

    def __init__(self, name: str, doc: str, inputs: dict[str, np.ndarray], function: str | None = None):
        self.name, self.doc, self.inputs = name, doc, inputs
        self.function = function or name  # the Relax function (the VM's entry)
        self.consts: list[str] = []
        self.ref: np.ndarray | None = None

    def params(self) -> list[relax.Var]:
        return [relax.Var(k, relax.TensorType(v.shape, str(v.dtype))) for k, v in self.inputs.items()]

    def const(self, name: str, value: np.ndarray) -> relax.Constant:
        self.consts.append(name)
        return relax.const(value)


def emit(bb: relax.BlockBuilder, case: Case, body: Callable[..., relax.Expr]) -> None:
    params = case.params()
    with bb.function(case.function, params):
        with bb.dataflow():
            out = bb.emit_output(body(*params))
        bb.emit_func_output(out)


def conv(bb, x, w, bias=None, act=None, **attrs):
    y = bb.emit(relax.op.nn.conv2d(x, w, **attrs))
    if bias is not None:
        y = bb.emit(relax.op.add(y, bias))
    if act == "relu":
        y = bb.emit(relax.op.nn.relu(y))
    return y


# MergeCompositeFunctions merges only "main": one model per DNNL artifact.


def dnnl_conv2d_relu_x2(bb: relax.BlockBuilder) -> list[Case]:
    a = Case(
        "conv2d_relu_x2",
        "apache-tvm's own DNNL test model, smaller: weights are function parameters, both convs in "
        "one dnnl_json module (two kernels, the second fed by the first)",
        {"x": rand(1, 8, 14, 14), "w1": rand(8, 8, 3, 3, scale=0.3), "w2": rand(8, 8, 3, 3, scale=0.3)},
        function="main",
    )
    emit(bb, a, lambda x, w1, w2: conv(bb, conv(bb, x, w1, act="relu", padding=(1, 1)), w2, act="relu"))
    i = a.inputs
    a.ref = relu(conv2d(relu(conv2d(i["x"], i["w1"], padding=(1, 1))), i["w2"]))
    return [a]


def dnnl_small_cnn(bb: relax.BlockBuilder) -> list[Case]:
    b = Case(
        "small_cnn",
        "weights are Relax constants (MergeCompositeFunctions lifts them into the external "
        "functions' parameters, so the VM passes them from its constant pool): "
        "conv+bias+relu (dnnl) -> max-pool (llvm) -> conv+bias stride 2 and grouped dilated "
        "conv+relu (one dnnl module, two kernels) -> mean, dense, softmax (llvm)",
        {"x": rand(2, 3, 16, 12)},
        function="main",
    )
    w1, b1 = rand(8, 3, 3, 3, scale=0.4), rand(1, 8, 1, 1, scale=0.1)
    w2, b2 = rand(16, 8, 3, 3, scale=0.2), rand(1, 16, 1, 1, scale=0.1)
    w3, wd, bd = rand(16, 4, 3, 3, scale=0.3), rand(16, 10, scale=0.3), rand(10, scale=0.1)

    def small_cnn(x):
        y = conv(bb, x, b.const("w1", w1), b.const("b1", b1), "relu", padding=(1, 1))
        y = bb.emit(relax.op.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2)))
        y = conv(bb, y, b.const("w2", w2), b.const("b2", b2), strides=(2, 2), padding=(1, 1))
        y = conv(bb, y, b.const("w3", w3), act="relu", padding=(2, 2), dilation=(2, 2), groups=4)
        y = bb.emit(relax.op.mean(y, axis=[2, 3]))
        y = bb.emit(relax.op.add(relax.op.matmul(y, b.const("wd", wd)), b.const("bd", bd)))
        return relax.op.nn.softmax(y)

    emit(bb, b, small_cnn)
    v = relu(conv2d(b.inputs["x"], w1, padding=(1, 1)) + b1)
    v = conv2d(max_pool2x2(v), w2, strides=(2, 2), padding=(1, 1)) + b2
    v = relu(conv2d(v, w3, padding=(2, 2), dilation=(2, 2), groups=4))
    b.ref = softmax(v.mean(axis=(2, 3)) @ wd + bd)
    return [b]


def gelu_tanh(v):
    """cuBLASLt's GELU epilogue (what the hardware computes for Relax's gelu): tanh form."""
    return 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3)))


def cublas_cases(bb: relax.BlockBuilder) -> list[Case]:
    """partition_for_cublas' patterns; weights are inputs."""
    mm = relax.op.matmul
    f64 = lambda c: {k: v.astype("float64") for k, v in c.inputs.items()}  # noqa: E731
    cases = []

    c = Case(
        "mlp",
        "matmul+bias+relu, then matmul with a transposed weight+bias+gelu",
        {
            "x": rand(8, 32),
            "w1": rand(32, 64, scale=0.2),
            "b1": rand(64),
            "w2": rand(16, 64, scale=0.2),
            "b2": rand(16),
        },
    )
    emit(
        bb,
        c,
        lambda x, w1, b1, w2, b2: relax.op.nn.gelu(
            relax.op.add(
                mm(bb.emit(relax.op.nn.relu(relax.op.add(mm(x, w1), b1))), relax.op.permute_dims(w2)), b2
            )
        ),
    )
    i = f64(c)
    c.ref = gelu_tanh(np.maximum(i["x"] @ i["w1"] + i["b1"], 0) @ i["w2"].T + i["b2"])
    cases.append(c)

    c = Case("batched", "batch of 4 on both sides", {"a": rand(4, 8, 16), "b": rand(4, 16, 24)})
    emit(bb, c, lambda a, b_: mm(a, b_))
    c.ref = f64(c)["a"] @ f64(c)["b"]
    cases.append(c)

    c = Case(
        "flattened", "batched lhs, 2-D rhs, bias", {"a": rand(2, 3, 8, 16), "w": rand(16, 24), "b": rand(24)}
    )
    emit(bb, c, lambda a, w, b_: relax.op.add(mm(a, w), b_))
    c.ref = f64(c)["a"] @ f64(c)["w"] + f64(c)["b"]
    cases.append(c)

    c = Case(
        "half",
        "fp16 matmul+bias",
        {
            "x": rand(16, 64).astype("float16"),
            "w": rand(64, 32, scale=0.2).astype("float16"),
            "b": rand(32).astype("float16"),
        },
    )
    emit(bb, c, lambda x, w, b_: relax.op.add(mm(x, w), b_))
    c.ref = (f64(c)["x"] @ f64(c)["w"] + f64(c)["b"]).astype("float16")
    cases.append(c)

    c = Case(
        "int8",
        "int8 x int8 -> int32",
        {
            "x": RNG.integers(-8, 8, (16, 32)).astype("int8"),
            "w": RNG.integers(-8, 8, (32, 16)).astype("int8"),
        },
    )
    emit(bb, c, lambda x, w: mm(x, w, out_dtype="int32"))
    c.ref = c.inputs["x"].astype("int32") @ c.inputs["w"].astype("int32")
    cases.append(c)

    # apache-tvm's own fp8 cuBLAS test model: the scale is a constant the codegen turns into the
    # kernel's dq_scale attribute (zero point 0), hence the constants bound for this module.
    fp8 = ml_dtypes.float8_e4m3fn
    c = Case(
        "dequantize",
        "fp8 e4m3 matmul with a transposed weight, dequantized to fp16 (scale 0.5)",
        {"x": RNG.uniform(-2, 2, (16, 32)).astype(fp8), "w": RNG.uniform(-2, 2, (64, 32)).astype(fp8)},
    )
    emit(
        bb,
        c,
        lambda x, w: relax.op.dequantize(
            bb.emit(mm(x, bb.emit(relax.op.permute_dims(w)), out_dtype="float32")),
            relax.const(DQ_SCALE, "float16"),
            relax.const(0.0, "float16"),
            axis=-1,
            out_dtype="float16",
        ),
    )
    c.ref = (DQ_SCALE * (f64(c)["x"] @ f64(c)["w"].T)).astype("float16")
    cases.append(c)
    return cases


def nhwc_to_nchw(a):
    return a.transpose(0, 3, 1, 2)


def cudnn_cases(bb: relax.BlockBuilder) -> list[Case]:
    """partition_for_cudnn's conv2d patterns (NHWC/OHWI and NCHW/OIHW, fp32 and fp16)."""
    nhwc = {"data_layout": "NHWC", "kernel_layout": "OHWI"}
    cases = []
    c = Case(
        "nhwc_bias_relu",
        "NHWC/OHWI conv2d pad 1 + bias + relu",
        {"x": rand(1, 10, 10, 8), "w": rand(16, 3, 3, 8, scale=0.3), "b": rand(1, 1, 1, 16)},
    )
    emit(
        bb,
        c,
        lambda x, w, b_: relax.op.nn.relu(
            relax.op.add(bb.emit(relax.op.nn.conv2d(x, w, padding=(1, 1), **nhwc)), b_)
        ),
    )
    i = c.inputs
    y = conv2d(nhwc_to_nchw(i["x"]), nhwc_to_nchw(i["w"]), padding=(1, 1))
    c.ref = relu(y.transpose(0, 2, 3, 1) + i["b"])
    cases.append(c)

    c = Case(
        "nchw_bias_grouped",
        "NCHW/OIHW conv2d, 2 groups, stride 2, pad 1, + bias",
        {"x": rand(2, 8, 10, 10), "w": rand(8, 4, 3, 3, scale=0.3), "b": rand(1, 8, 1, 1)},
    )
    emit(
        bb,
        c,
        lambda x, w, b_: relax.op.add(
            bb.emit(relax.op.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1), groups=2)), b_
        ),
    )
    i = c.inputs
    c.ref = conv2d(i["x"], i["w"], strides=(2, 2), padding=(1, 1), groups=2) + i["b"]
    cases.append(c)

    c = Case(
        "half",
        "fp16 NHWC/OHWI conv2d",
        {"x": rand(1, 6, 6, 16).astype("float16"), "w": rand(8, 3, 3, 16, scale=0.2).astype("float16")},
    )
    emit(bb, c, lambda x, w: relax.op.nn.conv2d(x, w, out_dtype="float16", **nhwc))
    i = c.inputs
    c.ref = conv2d(nhwc_to_nchw(i["x"]), nhwc_to_nchw(i["w"])).transpose(0, 2, 3, 1).astype("float16")
    cases.append(c)
    return cases


def partition_dnnl(mod: tvm.IRModule) -> tvm.IRModule:
    return tvm.transform.Sequential(
        [
            # Not bound into the composites: the DNNL serializer visits only the composite calls'
            # arguments, so bound weights would vanish from the graph (verified: kernels with
            # one input); left at the call sites they become the graph's const nodes.
            relax.transform.FuseOpsByPattern(PATTERNS, bind_constants=False),
            relax.transform.MergeCompositeFunctions(),
        ]
    )(mod)


def partition_dnnl_bound_weights(mod: tvm.IRModule) -> tvm.IRModule:
    """What a user gets binding the weights into the composites: the DNNL serializer drops them."""
    return tvm.transform.Sequential(
        [
            relax.transform.FuseOpsByPattern(PATTERNS, bind_constants=True),
            relax.transform.MergeCompositeFunctions(),
        ]
    )(mod)


def dnnl_small_cnn_bound_weights(bb: relax.BlockBuilder) -> list[Case]:
    (case,) = dnnl_small_cnn(bb)
    case.name = "small_cnn_bound_weights"
    case.doc = "small_cnn partitioned with bind_constants=True: the compiler's graphs lack the weights"
    return [case]


def partition_cublas(mod: tvm.IRModule) -> tvm.IRModule:
    from tvm.relax.backend.cuda.cublas import partition_for_cublas

    # Only the dequantize case has constants (its scale and zero point), which its pattern
    # requires bound; every other case's weights are inputs.
    return partition_for_cublas(mod, bind_constants=True)


def partition_cudnn(mod: tvm.IRModule) -> tvm.IRModule:
    from tvm.relax.backend.cuda.cudnn import partition_for_cudnn

    return partition_for_cudnn(mod)


class Artifact:
    def __init__(
        self, file: str, prefix: str, target: Any, cases, partition, runs_here: bool, broken: str = ""
    ):
        self.file, self.prefix, self.target = file, prefix, target
        self.make_cases, self.partition, self.runs_here = cases, partition, runs_here
        self.broken = broken  # why the compiler's own output cannot run (kept to test the error)


def artifacts() -> list[Artifact]:
    cuda = tvm.target.Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")
    return [
        Artifact("dnnl_conv2d_relu_x2_cpu.so", "dnnl", "llvm", dnnl_conv2d_relu_x2, partition_dnnl, True),
        Artifact("dnnl_small_cnn_cpu.so", "dnnl", "llvm", dnnl_small_cnn, partition_dnnl, True),
        Artifact(
            "dnnl_bound_weights_cpu.so",
            "dnnl",
            "llvm",
            dnnl_small_cnn_bound_weights,
            partition_dnnl_bound_weights,
            True,
            broken="DNNLJSONSerializer serializes only the composite calls' arguments, so weights "
            "bound into the composites (FuseOpsByPattern(bind_constants=True)) are missing from the "
            "graph: its conv2d kernels have the data as their only input",
        ),
        # No GPU here: numpy is the only oracle for these two.
        Artifact("cublas_cuda.so", "cublas", cuda, cublas_cases, partition_cublas, False),
        Artifact("cudnn_cuda.so", "cudnn", cuda, cudnn_cases, partition_cudnn, False),
    ]


# ---- build, check, describe ---------------------------------------------------------------------


def composites(mod: tvm.IRModule) -> dict[str, list[str]]:
    """{external function: its composites}, after partitioning, before codegen."""
    out: dict[str, list[str]] = {}
    for gv, func in mod.functions.items():
        if isinstance(func, relax.Function) and func.attrs and "Codegen" in func.attrs:
            names: list[str] = []

            def visit(e, names=names):
                if isinstance(e, relax.Function) and e.attrs and "Composite" in e.attrs:
                    names.append(str(e.attrs["Composite"]))

            relax.analysis.post_order_visit(func.body, visit)
            out[gv.name_hint] = names
    return out


def offloaded_by_function(mod: tvm.IRModule, groups: dict[str, list[str]]) -> dict[str, list[str]]:
    """{Relax function: the composites it runs externally, in call order}."""
    out: dict[str, list[str]] = {}
    for gv, func in mod.functions.items():
        if isinstance(func, relax.Function) and gv.name_hint not in groups:
            seq: list[str] = []

            def visit(e, seq=seq):
                if isinstance(e, relax.Call) and isinstance(e.op, relax.GlobalVar):
                    seq.extend(groups.get(e.op.name_hint, []))

            relax.analysis.post_order_visit(func.body, visit)
            out[gv.name_hint] = seq
    return out


def module_tree(mod: Any) -> list[str]:
    kinds, queue = [], [mod]
    while queue:
        m = queue.pop(0)
        kinds.append(m.kind)
        queue.extend(m.imports)
    return kinds


def build_artifact(art: Artifact, out_dir: Path, expected: dict[str, np.ndarray]) -> dict[str, Any]:
    bb = relax.BlockBuilder()
    cases = art.make_cases(bb)
    partitioned = art.partition(bb.get())
    groups = composites(partitioned)
    by_function = offloaded_by_function(partitioned, groups)
    ex = tvm.compile(relax.transform.RunCodegen()(partitioned), target=art.target)
    path = out_dir / art.file
    ex.export_library(str(path))
    loaded = tvm.runtime.load_module(str(path))
    entry: dict[str, Any] = {
        **({"broken_by_the_compiler": art.broken} if art.broken else {}),
        "functions": [c.function for c in cases],
        "modules_in_serialized_order": module_tree(loaded),
        "external_symbols": groups,
        "cases": {},
    }
    vm, vm_error = None, ""
    if art.runs_here:
        try:
            vm = relax.VirtualMachine(loaded, tvm.cpu())
        except RuntimeError as err:  # recorded: numpy is the oracle either way
            vm_error = str(err).strip().splitlines()[-1]
            print(f"{art.file}: the source build's own runtime fails: {vm_error}")
    for c in cases:
        assert c.ref is not None
        for k, v in c.inputs.items():  # fp8 as its bytes: numpy has no float8
            expected[f"{art.prefix}:{c.name}:{k}"] = (
                v.view(np.uint8) if v.dtype == ml_dtypes.float8_e4m3fn else v
            )
        ref_dtype = "float32" if c.ref.dtype == np.float64 else str(c.ref.dtype)
        expected[f"{art.prefix}_out:{c.name}"] = c.ref.astype(ref_dtype)
        info: dict[str, Any] = {
            "doc": c.doc,
            "inputs": {k: [list(v.shape), str(v.dtype)] for k, v in c.inputs.items()},
            "output": [list(c.ref.shape), ref_dtype],
            "constants_bound": c.consts,
            "function": c.function,
            "offloaded_composites": by_function[c.function],
        }
        if vm is not None:
            got = vm[c.function](*[tvm.runtime.tensor(v) for v in c.inputs.values()]).numpy()
            np.testing.assert_allclose(got, c.ref, rtol=1e-4, atol=1e-5)
            info["source_build_runtime_max_abs_err_vs_numpy"] = float(np.abs(got - c.ref).max())
        elif vm_error:
            info["source_build_runtime_fails"] = vm_error
        entry["cases"][c.name] = info
    print(f"{art.file}: {entry['modules_in_serialized_order']}; {groups}")
    return entry


def compiler_description() -> dict[str, str]:
    return {
        "apache_tvm_version": tvm.__version__,
        "source": "apache/tvm main at 5d4dc8721307cf9677becacf0395c19be130e206 (0.27.0-dev) with "
        "tvm-ffi 0.1.13.post2, built by tests/artifacts/compiler/build_apache_tvm.py "
        "(USE_LLVM=llvm-config-15, USE_DNNL=ON; the cuBLAS/cuDNN codegens as its add-on)",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "byoc_compiled")
    parser.add_argument("--cuda-codegens", type=Path, help="libtvm_cuda_codegens.so (build_apache_tvm.py)")
    args = parser.parse_args()
    out_dir: Path = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    if not tvm.get_global_func("relax.ext.dnnl", True):
        raise SystemExit("this tvm has no relax.ext.dnnl: run it with the compiler build_apache_tvm.py made")
    chosen = artifacts()
    if args.cuda_codegens:
        ctypes.CDLL(str(args.cuda_codegens), mode=ctypes.RTLD_GLOBAL)
    else:
        chosen = [a for a in chosen if a.prefix == "dnnl"]

    expected: dict[str, np.ndarray] = {}
    manifest: dict[str, Any] = {
        "generator": "tests/artifacts/generate_byoc_compiled.py",
        "compiler": compiler_description(),
        "artifacts": {a.file: build_artifact(a, out_dir, expected) for a in chosen},
    }
    np.savez(out_dir / "expected.npz", **expected)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
