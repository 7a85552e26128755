"""Generate the apache-tvm 0.27 CUDA-graph test artifacts under ``tests/artifacts/cuda_graph``.

A fixture generator, never a runtime or CI dependency (it imports apache-tvm)::

    /work/venvs/tvm027/bin/python tests/artifacts/generate_cuda_graph.py [--out DIR]

Relax models compiled for ``Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")`` (fp32: the
0.27 compiler crashes on sm_90 targets and fp16 matmuls here) with the pass config
``relax.backend.use_cuda_graph=True``: its RewriteCUDAGraph pass lifts the static storage into
``cuda_graph_alloc`` (called through ``vm.builtin.cuda_graph.get_cached_alloc``) and the kernels
that only touch static storage and constants into ``main_cuda_graph_capture`` (called through
``vm.builtin.cuda_graph.run_or_capture``).  The device code is CUDA C++ source (fmt ``cuda``),
compiled by NVRTC when loaded, so no GPU or CUDA toolkit is needed here.

* ``mlp_graph``: a 4-layer MLP (16->32->32->32->8, relu between) with its weights embedded as
  constants and a static batch of 4 (``num_input=1``).  The first layer reads the input and is
  not captured; the next two layers (one kernel, launched twice on different buffers) are
  captured; the last writes the returned tensor (not static storage) and is not captured either.
* ``mlp_graph_dyn``: the same MLP with a symbolic batch ``n`` (``tir_var_upper_bound`` 16, so the
  storage is static, and ``relax.rewrite_cuda_graph.capture_symbolic_vars=["n"]``): the captured
  region depends on ``n``, so run_or_capture gets the shape ``(n,)`` as its cache key and one
  graph is captured per batch size.  Called with n = 3, 5, then 3 again.

Each model is also compiled for the CPU (without CUDA graphs: the same computation), run with
apache-tvm's own VM and checked against the numpy references ("cpu-equivalent").  The generator
asserts that the compiled VM code calls both builtins, and writes which kernels the capture
function launches into the manifest (``captured_kernels``) so the tests can tell captured from
directly launched kernels.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate as g  # noqa: E402  (shared helpers; imports apache-tvm)
import numpy as np  # noqa: E402
import tvm_ffi  # noqa: E402

import tvm  # noqa: E402
from tvm import relax  # noqa: E402

SIZES = (16, 32, 32, 32, 8)
UPPER_BOUND = 16  # the symbolic batch's tir_var_upper_bound
RUN_OR_CAPTURE = "vm.builtin.cuda_graph.run_or_capture"
GET_CACHED_ALLOC = "vm.builtin.cuda_graph.get_cached_alloc"


def cuda_target() -> tvm.target.Target:
    return tvm.target.Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")


def mlp_weights(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (g.uniform(rng, (i, o)) * np.float32(0.5), g.uniform(rng, (o,)) * np.float32(0.1))
        for i, o in zip(SIZES[:-1], SIZES[1:], strict=True)
    ]


def mlp_ref(x: np.ndarray, weights: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    h = x.astype("float64")
    for i, (w, b) in enumerate(weights):
        h = h @ w.astype("float64") + b.astype("float64")
        if i < len(weights) - 1:
            h = np.maximum(h, 0.0)
    return h.astype("float32")


def build_mlp(batch: int | tvm.tirx.Var, weights: list[tuple[np.ndarray, np.ndarray]]) -> tvm.IRModule:
    attrs: dict[str, Any] = {"num_input": 1}
    if isinstance(batch, tvm.tirx.Var):
        attrs["tir_var_upper_bound"] = {batch.name: UPPER_BOUND}
        attrs["relax.rewrite_cuda_graph.capture_symbolic_vars"] = [batch.name]
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([batch, SIZES[0]], "float32"))
    with bb.function("main", [x], attrs=attrs):
        with bb.dataflow():
            h: relax.Expr = x
            for i, (w, b) in enumerate(weights):
                h = bb.emit(relax.op.add(relax.op.matmul(h, relax.const(w)), relax.const(b)))
                if i < len(weights) - 1:
                    h = bb.emit(relax.op.nn.relu(h))
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    return bb.get()


def model_cases() -> list[g.ModelCase]:
    cases = []
    name = "mlp_graph"
    rng = g.rng_for(name)
    weights = mlp_weights(rng)
    calls = []
    for i in range(2):
        x = g.uniform(rng, (4, SIZES[0]))
        calls.append(
            g.Call({f"x_{i}": x, f"y_{i}": mlp_ref(x, weights)}, [g.arg_input(f"x_{i}")], [f"y_{i}"])
        )
    cases.append(
        g.ModelCase(
            name,
            "MLP 16->32->32->32->8 (relu between), weights embedded as constants, static batch 4, "
            "compiled with relax.backend.use_cuda_graph: layers 2-3 (two launches of one kernel) "
            "are captured into one CUDA graph; called twice with different inputs",
            build_mlp(4, weights),
            calls,
            1e-4,
            1e-4,
            output_is_tuple=False,
        )
    )
    name = "mlp_graph_dyn"
    rng = g.rng_for(name)
    weights = mlp_weights(rng)
    calls = []
    for i, n in enumerate((3, 5, 3)):
        x = g.uniform(rng, (n, SIZES[0]))
        calls.append(
            g.Call({f"x_{i}": x, f"y_{i}": mlp_ref(x, weights)}, [g.arg_input(f"x_{i}")], [f"y_{i}"])
        )
    cases.append(
        g.ModelCase(
            name,
            "the same MLP with a symbolic batch n (upper bound 16, captured per value of n), "
            "compiled with relax.backend.use_cuda_graph; called with n=3, n=5, then n=3 again",
            build_mlp(tvm.tirx.Var("n", "int64"), weights),
            calls,
            1e-4,
            1e-4,
            output_is_tuple=False,
        )
    )
    return cases


_FUNC_HEADER = re.compile(r"^@([\w.]+):$")
_CALL = re.compile(r"^\s+call\s+([\w.]+)\s")


def vm_calls(text: str) -> dict[str, list[str]]:
    """The callees of every VM function of an executable's ``as_text()``, in order."""
    calls: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if m := _FUNC_HEADER.match(line):
            current = m.group(1)
            calls[current] = []
        elif current is not None and (m := _CALL.match(line)):
            calls[current].append(m.group(1))
    return calls


def graph_info(ex: Any, device_kernels: list[str]) -> dict[str, Any]:
    """What RewriteCUDAGraph did to ``main``, asserted (a fixture without it would test nothing)."""
    calls = vm_calls(ex.as_text())
    main = calls["main"]
    assert GET_CACHED_ALLOC in main and RUN_OR_CAPTURE in main, main
    assert "cuda_graph_alloc" in calls and "main_cuda_graph_capture" in calls, sorted(calls)

    def kernels_of(host_funcs: list[str]) -> list[str]:
        # the host function `f` launches the device kernel `f_kernel`
        return [k for k in device_kernels if any(k == f + "_kernel" for f in host_funcs)]

    captured = kernels_of(calls["main_cuda_graph_capture"])
    direct = kernels_of(main)
    assert captured and direct and not set(captured) & set(direct), (captured, direct)
    assert set(captured) | set(direct) == set(device_kernels), device_kernels
    launches = [f for f in calls["main_cuda_graph_capture"] if f + "_kernel" in captured]
    return {
        "captured_kernels": captured,
        "captured_launches": len(launches),
        "direct_kernels": direct,
        "capture_regions": main.count(RUN_OR_CAPTURE),
    }


def build_case(case: g.ModelCase, out: Path) -> dict[str, Any]:
    cpu = tvm.compile(case.mod, target=g.make_target("cpu"))
    for call in case.calls:
        g.check(
            f"{case.name} (cpu reference)",
            g.run_vm_cpu(cpu, call, case.output_is_tuple),
            call,
            case.rtol,
            case.atol,
        )
    with tvm.transform.PassContext(config={"relax.backend.use_cuda_graph": True}):
        built = tvm.compile(case.mod, target=cuda_target())
    rel_so, rel_npz = f"cuda_graph/{case.name}.so", f"cuda_graph/{case.name}.npz"
    built.export_library(str(out / rel_so))
    g.save_npz(out / rel_npz, g.merged_arrays(case.calls))
    print(f"  {rel_so:28s} {(out / rel_so).stat().st_size:8d} bytes")
    entry = g.vm_case_entry(case, "cuda", rel_so, rel_npz, case.description, "cpu-equivalent")
    info = g.inspect_built(built.mod)
    return {**entry, "arch": "sm_80", **info, **graph_info(built, info["device_kernels"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="writes OUT/cuda_graph (default: here)")
    ns = parser.parse_args(argv)
    out: Path = ns.out.resolve()
    if not g.fresh_output_dir(out / "cuda_graph"):
        return 1
    manifest = [build_case(case, out) for case in model_cases()]
    doc = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate_cuda_graph.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        "numpy_version": np.__version__,
        "paths_relative_to": "the parent of the directory holding this manifest",
        "pass_config": {"relax.backend.use_cuda_graph": True},
        "targets": {"cuda": {"device_type": 2, "tvm_target": json.loads(str(cuda_target()))}},
        "cases": manifest,
    }
    d = out / "cuda_graph"
    (d / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {len(manifest)} cases to {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
