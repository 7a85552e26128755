"""Generate the contrib test artifacts under ``tests/artifacts/contrib`` (tvm-runtime-extra).

Run it, like ``generate.py`` beside it, with a Python that has ``apache-tvm==0.27.0.post1``::

    python3 -m venv /tmp/venv-tvm027
    /tmp/venv-tvm027/bin/pip install apache-tvm==0.27.0.post1 numpy
    /tmp/venv-tvm027/bin/python tests/artifacts/generate_contrib.py [--out DIR]

What it writes (deterministic: fixed seeds):

* Relax models using ``R.sort``, ``R.argsort``, ``R.topk`` and ``R.cumsum``, compiled for
  ``llvm`` (whose host code calls ``tvm.contrib.sort.*`` by name: these need the extra wheel)
  and for ``opencl`` (sorting done by TVM's GPU kernels), as ``<model>_<target>.so``;
* ``<model>.npz``: inputs and the outputs **numpy** computed with stable sorts (ties keep their
  index order, which is what 0.27 produces); inputs contain many ties on purpose;
* ``bench_*_cpu.so``: the two benchmark models (1e6-element float32 sort, top-10 of
  10000 rows x 100), inputs made at run time from the seed recorded in the manifest;
* ``random_seeded.npz``: what 0.27's seeded ``tvm.contrib.random.uniform``/``normal`` return;
* ``manifest.json``: every case (see ``README.md`` in this directory).

Before writing, every ``llvm`` model runs on apache-tvm's own runtime and must match numpy
exactly (indices and values), so the expected files are also 0.27's results.  OpenCL models
cannot run here; their numpy expectations are the same.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tvm_ffi

import tvm
from tvm import relax

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import fresh_output_dir, save_npz  # noqa: E402  (same directory; byte-deterministic npz)

# Outputs whose apache-tvm 0.27 OpenCL kernel is wrong on devices that do not run a work-group's
# items in lock step (PoCL runs them one after another): the scan in
# gpu_2d_continuous_cumsum_kernel reads shared_buf[i - d] in the same step that another work-item
# updates it, with no barrier in between.  Recorded so tests report it instead of hiding it.
OPENCL_UPSTREAM_BUGS = {
    "cumsum": "apache-tvm 0.27's OpenCL cumsum kernel races in __local memory (Hillis-Steele scan "
    "without a barrier between read and write); wrong on PoCL, lock-step GPUs may hide it",
}


def make_target(target: str) -> tvm.target.Target:
    if target == "cpu":
        return tvm.target.Target("llvm")
    return tvm.target.Target("opencl", host="llvm")


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def with_ties(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, levels: int) -> np.ndarray:
    """Values from a small set (so rows contain many equal keys), including -0.0 and 0.0."""
    if np.dtype(dtype).kind == "f":
        v = rng.integers(-levels, levels, size=shape).astype("float64") / 4.0
        v[v == 0] = np.where(rng.random(size=int((v == 0).sum())) < 0.5, -0.0, 0.0)
        return v.astype(dtype)
    return rng.integers(-levels, levels, size=shape).astype(dtype)


# Stable orders in numpy.  Descending must still keep equal keys in index order, so negate the
# keys in a wider type (exact for every integer and float input here) rather than flip the order.
def stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    keys = x.astype("float64") if x.dtype.kind == "f" else x.astype("int64")
    return np.argsort(-keys if descending else keys, axis=axis, kind="stable")


def topk_ref(x: np.ndarray, k: int, axis: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    order = np.take(stable_order(x, axis, descending=largest), np.arange(k), axis=axis)
    return np.take_along_axis(x, order, axis=axis), order


@dataclass
class Output:
    key: str
    array: np.ndarray
    is_index: bool  # indices of equal keys are only reproducible with a stable order


@dataclass
class Model:
    name: str
    description: str
    input_key: str
    x: np.ndarray
    ops: list[tuple[Any, Output]]  # (relax expr builder on x, expected output)
    targets: tuple[str, ...]
    contrib: list[str]  # tvm.contrib functions the llvm build calls
    rtol: float = 0.0
    atol: float = 0.0


def _sort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    return np.take_along_axis(x, stable_order(x, axis, descending), axis=axis)


def model_f32() -> Model:
    name = "sort_ops_f32"
    x = with_ties(rng_for(name), (16, 300), "float32", 40)
    tv, ti = topk_ref(x, 7, -1, largest=True)
    cumsum = np.cumsum(x.astype("float64"), axis=1).astype("float32")
    return Model(
        name,
        "float32 [16,300] with ties and signed zeros: sort ascending (axis -1, rows above the radix "
        "threshold), argsort descending along axis 0 (int64), top-7 largest (values + int32 "
        "indices), cumsum along axis 1",
        "x",
        x,
        [
            (
                lambda v: relax.op.sort(v, axis=-1, descending=False),
                Output("sorted", _sort(x, -1, False), False),
            ),
            (
                lambda v: relax.op.argsort(v, axis=0, descending=True, dtype="int64"),
                Output("argsort_desc_axis0", stable_order(x, 0, True), True),
            ),
            (
                lambda v: relax.op.topk(v, k=7, axis=-1, ret_type="both", largest=True, dtype="int32"),
                Output("topk_values", tv, False),
            ),
            (None, Output("topk_indices", ti.astype("int32"), True)),
            (lambda v: relax.op.cumsum(v, axis=1), Output("cumsum", cumsum, False)),
        ],
        ("cpu", "opencl"),
        ["tvm.contrib.sort.sort", "tvm.contrib.sort.argsort", "tvm.contrib.sort.topk"],
        rtol=1e-5,
        atol=1e-4,
    )


def model_i32() -> Model:
    name = "sort_ops_i32"
    x = with_ties(rng_for(name), (4, 1000), "int32", 50)
    tv, _ = topk_ref(x, 10, -1, largest=False)
    _, ti0 = topk_ref(x, 3, 0, largest=True)
    return Model(
        name,
        "int32 [4,1000] in [-50,50): sort descending, argsort ascending (int32), top-10 smallest "
        "values only, top-3 largest indices only along axis 0 (int64)",
        "x",
        x,
        [
            (
                lambda v: relax.op.sort(v, axis=-1, descending=True),
                Output("sorted_desc", _sort(x, -1, True), False),
            ),
            (
                lambda v: relax.op.argsort(v, axis=1, descending=False, dtype="int32"),
                Output("argsort", stable_order(x, 1, False).astype("int32"), True),
            ),
            (
                lambda v: relax.op.topk(v, k=10, axis=-1, ret_type="values", largest=False),
                Output("bottom10_values", tv, False),
            ),
            (
                lambda v: relax.op.topk(v, k=3, axis=0, ret_type="indices", largest=True, dtype="int64"),
                Output("top3_axis0_indices", ti0, True),
            ),
        ],
        ("cpu", "opencl"),
        ["tvm.contrib.sort.sort", "tvm.contrib.sort.argsort", "tvm.contrib.sort.topk"],
    )


def model_f16() -> Model:
    name = "sort_ops_f16"
    x = with_ties(rng_for(name), (8, 64), "float16", 20)
    tv, ti = topk_ref(x, 4, -1, largest=True)
    return Model(
        name,
        "float16 [8,64] with ties: argsort ascending (int32), sort descending, top-4 (both, "
        "int64 indices). CPU only: PoCL has no cl_khr_fp16",
        "x",
        x,
        [
            (
                lambda v: relax.op.argsort(v, axis=-1, descending=False, dtype="int32"),
                Output("argsort", stable_order(x, -1, False).astype("int32"), True),
            ),
            (
                lambda v: relax.op.sort(v, axis=-1, descending=True),
                Output("sorted_desc", _sort(x, -1, True), False),
            ),
            (
                lambda v: relax.op.topk(v, k=4, axis=-1, ret_type="both", largest=True, dtype="int64"),
                Output("topk_values", tv, False),
            ),
            (None, Output("topk_indices", ti, True)),
        ],
        ("cpu",),
        ["tvm.contrib.sort.sort", "tvm.contrib.sort.argsort", "tvm.contrib.sort.topk"],
    )


def model_f64() -> Model:
    name = "sort_ops_f64"
    x = with_ties(rng_for(name), (5000,), "float64", 1000)
    return Model(
        name,
        "float64 [5000] (1-D, 64-bit keys): sort ascending, argsort descending (int64)",
        "x",
        x,
        [
            (
                lambda v: relax.op.sort(v, axis=0, descending=False),
                Output("sorted", _sort(x, 0, False), False),
            ),
            (
                lambda v: relax.op.argsort(v, axis=0, descending=True, dtype="int64"),
                Output("argsort_desc", stable_order(x, 0, True), True),
            ),
        ],
        ("cpu",),
        ["tvm.contrib.sort.sort", "tvm.contrib.sort.argsort"],
    )


def build(model: Model) -> tvm.IRModule:
    bb = relax.BlockBuilder()
    x = relax.Var(model.input_key, relax.TensorType(list(model.x.shape), str(model.x.dtype)))
    with bb.function("main", [x]):
        with bb.dataflow():
            outs: list[Any] = []
            for make, _ in model.ops:
                if make is None:  # second output of the previous (tuple-valued) op
                    continue
                value = bb.emit(make(x))
                if isinstance(value.ty, relax.TupleType):
                    for i in range(len(value.ty.fields)):
                        outs.append(bb.emit(relax.TupleGetItem(value, i)))
                else:
                    outs.append(value)
            result = bb.emit_output(relax.Tuple(outs))
        bb.emit_func_output(result)
    return bb.get()


def run_on_apache(path: Path, model: Model) -> list[np.ndarray]:
    dev = tvm.cpu(0)
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), dev)
    return [r.numpy() for r in vm["main"](tvm.runtime.tensor(model.x, dev))]


def check_against_numpy(label: str, got: list[np.ndarray], model: Model) -> None:
    outputs = [o for _, o in model.ops]
    if len(got) != len(outputs):
        raise AssertionError(f"{label}: {len(got)} outputs, expected {len(outputs)}")
    for value, out in zip(got, outputs):
        if value.dtype != out.array.dtype or value.shape != out.array.shape:
            raise AssertionError(
                f"{label}: {out.key} is {value.dtype}{value.shape}, "
                f"expected {out.array.dtype}{out.array.shape}"
            )
        if out.key == "cumsum":
            np.testing.assert_allclose(value, out.array, rtol=model.rtol, atol=model.atol, err_msg=label)
        else:
            np.testing.assert_array_equal(value, out.array, err_msg=f"{label}: {out.key}")


# Benchmarks: shapes named in issue 11; inputs are generated from `seed` at run time.
BENCHES = [
    {
        "name": "bench_sort_1m",
        "description": "sort of 1e6 float32 (ascending)",
        "shape": [1_000_000],
        "op": "sort",
        "seed": 11,
    },
    {
        "name": "bench_topk_10k",
        "description": "top-10 (values + int64 indices) of each of 10000 rows x 100 float32",
        "shape": [10_000, 100],
        "op": "topk",
        "k": 10,
        "seed": 12,
    },
]


def bench_module(spec: dict[str, Any]) -> tvm.IRModule:
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(spec["shape"], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            if spec["op"] == "sort":
                out = bb.emit_output(relax.op.sort(x, axis=-1))
            else:
                out = bb.emit_output(relax.op.topk(x, k=spec["k"], axis=-1, ret_type="both", dtype="int64"))
        bb.emit_func_output(out)
    return bb.get()


def seeded_random(out: Path) -> dict[str, Any]:
    """0.27's seeded random functions (stateless: same seeds, same numbers)."""
    cases = {
        "uniform": ("tvm.contrib.random.uniform", (7, 9, -2.0, 3.0)),
        "normal": ("tvm.contrib.random.normal", (5, 6, 1.5, 0.25)),
    }
    arrays: dict[str, np.ndarray] = {}
    entries = []
    for key, (func, args) in cases.items():
        t = tvm.runtime.empty((1000,), "float32", tvm.cpu(0))
        tvm.get_global_func(func)(*args, t)
        arrays[key] = t.numpy()
        entries.append(
            {"key": key, "function": func, "args": list(args), "shape": [1000], "dtype": "float32"}
        )
    save_npz(out / "random_seeded.npz", arrays)
    return {"npz": "random_seeded.npz", "calls": entries}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "contrib")
    ns = parser.parse_args(argv)
    out: Path = ns.out.resolve()
    if not fresh_output_dir(out):
        return 2

    cases: list[dict[str, Any]] = []
    for model in (model_f32(), model_i32(), model_f16(), model_f64()):
        outputs = [o for _, o in model.ops]
        save_npz(out / f"{model.name}.npz", {model.input_key: model.x, **{o.key: o.array for o in outputs}})
        mod = build(model)
        model_keys = {o.key for o in outputs}
        for target in model.targets:
            rel_so = f"{model.name}_{target}.so"
            tvm.compile(mod, target=make_target(target)).export_library(str(out / rel_so))
            if target == "cpu":
                check_against_numpy(rel_so, run_on_apache(out / rel_so, model), model)
            cases.append(
                {
                    "name": model.name,
                    "target": target,
                    "file": rel_so,
                    "npz": f"{model.name}.npz",
                    "function": "main",
                    "inputs": [model.input_key],
                    "outputs": [o.key for o in outputs],
                    "index_outputs": [o.key for o in outputs if o.is_index],
                    "rtol": model.rtol,
                    "atol": model.atol,
                    "contrib_functions": model.contrib if target == "cpu" else [],
                    "verified": "apache-tvm 0.27 runtime" if target == "cpu" else "numpy expectation only",
                    "upstream_bugs": {
                        k: v
                        for k, v in OPENCL_UPSTREAM_BUGS.items()
                        if target == "opencl" and k in model_keys
                    },
                    "description": model.description,
                }
            )
            print(f"  {rel_so:28s} {(out / rel_so).stat().st_size:8d} bytes")

    benches = []
    for spec in BENCHES:
        rel_so = f"{spec['name']}_cpu.so"
        tvm.compile(bench_module(spec), target=make_target("cpu")).export_library(str(out / rel_so))
        benches.append({**spec, "file": rel_so, "dtype": "float32"})
        print(f"  {rel_so:28s} {(out / rel_so).stat().st_size:8d} bytes")

    manifest = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate_contrib.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        "paths_relative_to": "the directory holding manifest.json",
        "cases": cases,
        "benchmarks": benches,
        "random": seeded_random(out),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} model cases, {len(benches)} benchmark models to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
