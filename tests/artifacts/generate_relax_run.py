"""Generate the ``relax.run.*`` fixture under ``tests/artifacts/relax_run``.

Run it, like ``generate.py`` beside it, with a Python that has ``apache-tvm==0.27.0.post1``::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_relax_run.py [--out DIR]

apache-tvm 0.27 registers ``relax.run.unique``, ``nonzero``, ``print``, ``assert_op`` and
``shape_to_tensor`` from its Python package; compiled models call them by name (``R.unique``,
``R.nonzero``, ``R.print``, ``R.assert_op``).  What it writes (deterministic: fixed inputs):

* ``relax_run_{cpu,opencl,webgpu}.so``: one Relax module, compiled for ``llvm``, ``opencl`` and
  ``webgpu`` (host ``llvm``), whose functions compute on the device first (so the runtime reads
  device tensors back) and then call the ``relax.run`` functions: ``unique_int`` (every flag
  combination, sorted and in order of appearance), ``unique_float`` (ties and NaNs),
  ``unique_axis`` (slices along axis 0 and 1, and the flattened 2-D case whose inverse has the
  input's shape), ``nonzero`` / ``nonzero_bool`` (of a float and of a bool tensor),
  ``print_assert`` (formatted prints, an assert on a PrimValue condition) and
  ``assert_on_device`` (an assert on a bool tensor computed on the device); the two asserts
  fail with their message for a negative sum.  The WebGPU build leaves out the functions with a
  bool-producing kernel: apache-tvm 0.27 declares bool buffers as ``array<i8>`` in WGSL, which
  has no such type (recorded in the manifest as ``not_on``);
* ``expected.npz``: every function's outputs as apache-tvm 0.27's own VM returned them for the
  ``llvm`` build (checked against numpy before writing), keyed ``<function>.<i>`` in the order of
  the flattened result tuple, plus ``direct.<case>.<i>``: what 0.27's registered functions return
  when called directly on more element types (bool, uint8, int64, float16, float64, 0-d, empty)
  and for ``shape_to_tensor``;
* ``manifest.json``: per function its targets, inputs (tensors, or ``prim`` values passed as
  Python scalars), output keys, printed text and failing call (inputs, error, message), and
  every array's shape (the npz keeps 0-d arrays as 1-d).

The GPU builds cannot run here under apache-tvm; their expectations are the ``llvm`` ones (the
same computation, and 0.27's ``relax.run`` functions always run on the host).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import tvm_ffi

import tvm
from tvm import relax
from tvm.script import ir as I  # noqa: N812  (the TVMScript convention)
from tvm.script import relax as R  # noqa: N812

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import fresh_output_dir, save_npz  # noqa: E402  (same directory; byte-deterministic npz)

TARGETS = {
    "cpu": lambda: tvm.target.Target("llvm"),
    "opencl": lambda: tvm.target.Target("opencl", host="llvm"),
    "webgpu": lambda: tvm.target.Target("webgpu", host="llvm"),
}

# The inputs (ties everywhere; NaNs among the floats).
X_INT = np.array([3, -1, 3, 7, 0, -1, 3, 5, 0, 7, 2, -1], dtype="int32")
X_FLOAT = np.array(
    [2.5, np.nan, -1.0, 2.5, 0.5, np.nan, -1.0, 4.0, 0.5, 2.5, np.nan, -3.5, 4.0, 1.0, -1.0, 0.5],
    dtype="float32",
)
M_INT = np.array(
    [[1, 2, 1, 2], [0, 5, 0, 5], [1, 2, 1, 2], [4, 4, 3, 3], [0, 5, 0, 5]],
    dtype="int32",
)
A_FLOAT = np.array(
    [[0.0, 1.5, 0.0, -2.0, 0.0], [3.0, 0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 7.0, 0.0, 0.0]], "float32"
)
PRINT_OK = np.array([1.0, 2.0, 3.0, 4.0], "float32")
PRINT_FAIL = np.array([-1.0, -2.0, 3.0, -4.0], "float32")


@I.ir_module
class RelaxRun:
    @R.function
    def unique_int(x: R.Tensor((12,), "int32")):  # noqa: N805
        y = R.add(x, x)
        a = R.unique(y)
        b = R.unique(y, sorted=False)
        c = R.unique(y, sorted=True, return_index=True, return_inverse=True, return_counts=True)
        d = R.unique(y, sorted=False, return_index=True, return_inverse=True, return_counts=True)
        e = R.unique(y, sorted=False, return_inverse=True, return_counts=True)
        return (a, b, c, d, e)

    @R.function
    def unique_float(x: R.Tensor((16,), "float32")):  # noqa: N805
        y = R.add(x, x)
        a = R.unique(y)
        b = R.unique(y, sorted=False)
        c = R.unique(y, sorted=True, return_index=True, return_inverse=True, return_counts=True)
        d = R.unique(y, sorted=False, return_index=True, return_inverse=True, return_counts=True)
        return (a, b, c, d)

    @R.function
    def unique_axis(m: R.Tensor((5, 4), "int32")):  # noqa: N805
        y = R.add(m, m)
        a = R.unique(y, sorted=True, return_index=True, return_inverse=True, return_counts=True, axis=0)
        b = R.unique(y, sorted=False, return_index=True, return_inverse=True, return_counts=True, axis=1)
        c = R.unique(y, sorted=False, axis=0)
        d = R.unique(y, return_inverse=True)
        return (a, b, c, d)

    @R.function
    def nonzero(a: R.Tensor((3, 5), "float32")):  # noqa: N805
        y = R.add(a, a)
        return R.nonzero(y)

    @R.function
    def nonzero_bool(a: R.Tensor((3, 5), "float32")):  # noqa: N805
        b = R.greater(a, R.const(0, "float32"))
        return R.nonzero(b)

    @R.function(pure=False)
    def print_assert(x: R.Tensor((4,), "float32"), ok: R.Prim("bool")):  # noqa: N805
        s = R.sum(x)
        R.assert_op(ok, [s], format="the sum {} must be positive")
        R.print(x, s, format="x={} sum={}")
        R.print(s, x)
        return R.add(x, x)

    @R.function(pure=False)
    def assert_on_device(x: R.Tensor((4,), "float32")):  # noqa: N805
        s = R.sum(x)
        positive = R.greater(s, R.const(0, "float32"))
        R.assert_op(positive, [s, x])
        return R.add(x, x)


# function -> its inputs, in order (a Python bool is passed as a Relax PrimValue)
INPUTS: dict[str, dict[str, Any]] = {
    "unique_int": {"x": X_INT},
    "unique_float": {"x": X_FLOAT},
    "unique_axis": {"m": M_INT},
    "nonzero": {"a": A_FLOAT},
    "nonzero_bool": {"a": A_FLOAT},
    "print_assert": {"x": PRINT_OK, "ok": True},
    "assert_on_device": {"x": PRINT_OK},
}
# Calls that fail their assertion: function -> inputs.
FAILING: dict[str, dict[str, Any]] = {
    "print_assert": {"x": PRINT_FAIL, "ok": False},
    "assert_on_device": {"x": PRINT_FAIL},
}
# Functions whose WebGPU build cannot run: apache-tvm 0.27's WebGPU code generator declares a
# bool buffer as `array<i8>`, a type WGSL does not have, so every kernel writing a bool tensor
# fails shader validation (wgpu-native's naga) on any WebGPU implementation.
NOT_ON_WEBGPU = ("nonzero_bool", "assert_on_device")
WEBGPU_BOOL_BUG = (
    "apache-tvm 0.27's WebGPU codegen declares bool buffers as array<i8>, which WGSL lacks: "
    "kernels producing a bool tensor fail shader validation"
)


def module_for(target: str) -> tvm.IRModule:
    if target != "webgpu":
        return RelaxRun
    keep = {gv: f for gv, f in RelaxRun.functions_items() if gv.name_hint not in NOT_ON_WEBGPU}
    return tvm.IRModule(keep)


# Direct calls of 0.27's registered functions: (case, function, input or None, other arguments).
DIRECT = [
    ("unique_bool", "relax.run.unique", np.array([True, False, True, True]), [0, 1, 1, 1]),
    ("unique_uint8", "relax.run.unique", np.array([200, 3, 200, 255, 0, 3], "uint8"), [1, 1, 1, 1]),
    (
        "unique_int64",
        "relax.run.unique",
        np.array([2**40, -(2**62), 5, 2**40, -(2**62), 9], "int64"),
        [0, 1, 1, 1],
    ),
    (
        "unique_float16",
        "relax.run.unique",
        np.array([1.5, np.nan, -2.0, 1.5, np.nan, 0.25], "float16"),
        [1, 1, 1, 1],
    ),
    (
        "unique_float64",
        "relax.run.unique",
        np.array([1e300, -1e-300, 1e300, np.inf, -np.inf, np.inf]),
        [0, 0, 1, 1],
    ),
    ("unique_scalar", "relax.run.unique", np.array(7, "int32"), [1, 1, 1, 1]),
    ("unique_empty", "relax.run.unique", np.zeros((0,), "float32"), [1, 1, 1, 1]),
    ("unique_values_only", "relax.run.unique", np.array([5, 1, 5, 2], "int16"), [1, 0, 0, 0]),
    ("unique_axis_last", "relax.run.unique", np.array([[1, 0, 1], [2, 9, 2]], "int8"), [1, 1, 1, 1, -1]),
    (
        "unique_axis_nan",
        "relax.run.unique",
        np.array([[1.0, np.nan, 1.0, 2.0], [3.0, 4.0, 3.0, 5.0]], "float32"),
        [1, 1, 1, 1, 1],
    ),
    ("nonzero_bool", "relax.run.nonzero", np.array([[True, False], [False, True], [True, True]]), []),
    ("nonzero_scalar", "relax.run.nonzero", np.array(3.0, "float32"), []),
    ("nonzero_zeros", "relax.run.nonzero", np.array([-0.0, 0.0, np.nan], "float32"), []),
    ("nonzero_3d", "relax.run.nonzero", np.arange(24, dtype="int8").reshape(2, 3, 4) % 5, []),
    ("shape_to_tensor_3", "relax.run.shape_to_tensor", None, [[2, 3, 4]]),
    ("shape_to_tensor_empty", "relax.run.shape_to_tensor", None, [[]]),
]


def flatten(value: Any) -> list[np.ndarray]:
    if isinstance(value, tvm.runtime.Tensor):
        return [value.numpy()]
    out: list[np.ndarray] = []
    for item in value:
        out.extend(flatten(item))
    return out


def numpy_unique(x: np.ndarray, sorted_: bool, index: bool, inverse: bool, counts: bool, axis: Any = None):
    """numpy.unique with sorted=False meaning "in order of first occurrence": what 0.27 returns."""
    values, first, inv, cnt = np.unique(
        x, return_index=True, return_inverse=True, return_counts=True, axis=axis
    )
    if not sorted_:
        order = np.argsort(first)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values, first, inv, cnt = np.take(values, order, axis=axis or 0), first[order], rank[inv], cnt[order]
    outs = [values] + [a for a, want in ((first, index), (inv, inverse), (cnt, counts)) if want]
    return outs


def numpy_expectation(function: str) -> list[np.ndarray]:
    """The same answers computed with numpy directly (a check of what 0.27 returned)."""
    if function == "unique_int" or function == "unique_float":
        y = INPUTS[function]["x"] * 2
        out = numpy_unique(y, True, False, False, False) + numpy_unique(y, False, False, False, False)
        out += numpy_unique(y, True, True, True, True) + numpy_unique(y, False, True, True, True)
        if function == "unique_int":
            out += numpy_unique(y, False, False, True, True)
        return out
    if function == "unique_axis":
        y = M_INT * 2
        return (
            numpy_unique(y, True, True, True, True, axis=0)
            + numpy_unique(y, False, True, True, True, axis=1)
            + numpy_unique(y, False, False, False, False, axis=0)
            + numpy_unique(y, True, False, True, False)
        )
    if function == "nonzero":
        return [np.stack(np.nonzero(A_FLOAT * 2))]
    if function == "nonzero_bool":
        return [np.stack(np.nonzero(A_FLOAT > 0))]
    if function in ("print_assert", "assert_on_device"):
        return [PRINT_OK * 2]
    raise ValueError(function)


def check(label: str, got: list[np.ndarray], want: list[np.ndarray]) -> None:
    if len(got) != len(want):
        raise AssertionError(f"{label}: {len(got)} outputs, numpy gives {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g.dtype != w.dtype or g.shape != w.shape:
            raise AssertionError(f"{label}.{i}: {g.dtype}{g.shape}, numpy gives {w.dtype}{w.shape}")
        np.testing.assert_array_equal(g, w, err_msg=f"{label}.{i}")


def run_direct() -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
    arrays: dict[str, np.ndarray] = {}
    cases = []
    for case, function, x, rest in DIRECT:
        f = tvm.get_global_func(function)
        if x is None:
            result = f(tvm_ffi.Shape(rest[0]))
        else:
            result = f(tvm.runtime.tensor(x), *rest)
            arrays[f"direct.{case}.input"] = x
        outs = flatten(result)
        for i, value in enumerate(outs):
            arrays[f"direct.{case}.{i}"] = value
        cases.append(
            {
                "case": case,
                "function": function,
                "input": f"direct.{case}.input" if x is not None else None,
                "args": rest,
                "outputs": [f"direct.{case}.{i}" for i in range(len(outs))],
                "is_tuple": not isinstance(result, tvm.runtime.Tensor),
            }
        )
    return arrays, cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "relax_run")
    out: Path = parser.parse_args(argv).out.resolve()
    if not fresh_output_dir(out):
        return 2
    for target, make in TARGETS.items():
        path = out / f"relax_run_{target}.so"
        tvm.compile(module_for(target), target=make()).export_library(str(path))
        print(f"  {path.name:24s} {path.stat().st_size:8d} bytes")

    dev = tvm.cpu(0)
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(out / "relax_run_cpu.so")), dev)
    arrays: dict[str, np.ndarray] = {}

    def arguments(function: str, inputs: dict[str, Any], tag: str) -> tuple[list[Any], list[dict[str, str]]]:
        args, specs = [], []
        for key, value in inputs.items():
            name = f"{function}.{tag}.{key}"
            arrays[name] = np.asarray(value)
            is_prim = isinstance(value, bool)
            args.append(value if is_prim else tvm.runtime.tensor(value, dev))
            specs.append({"key": name, "kind": "prim" if is_prim else "tensor"})
        return args, specs

    functions = []
    for function, inputs in INPUTS.items():
        args, specs = arguments(function, inputs, "input")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            outs = flatten(vm[function](*args))
        check(function, outs, numpy_expectation(function))
        for i, value in enumerate(outs):
            arrays[f"{function}.{i}"] = value
        entry: dict[str, Any] = {
            "function": function,
            "targets": [t for t in TARGETS if t != "webgpu" or function not in NOT_ON_WEBGPU],
            "inputs": specs,
            "outputs": [f"{function}.{i}" for i in range(len(outs))],
            "printed": printed.getvalue(),
        }
        if function in NOT_ON_WEBGPU:
            entry["not_on"] = {"webgpu": WEBGPU_BOOL_BUG}
        if function in FAILING:
            args, specs = arguments(function, FAILING[function], "failing")
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    vm[function](*args)
            except AssertionError as err:
                entry["failing"] = {"inputs": specs, "error": type(err).__name__, "message": str(err)}
            else:
                raise SystemExit(f"{function} did not fail its assertion")
        functions.append(entry)

    direct_arrays, direct_cases = run_direct()
    arrays.update(direct_arrays)
    save_npz(out / "expected.npz", arrays)
    manifest = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate_relax_run.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        "numpy_version": np.__version__,
        "paths_relative_to": "the directory holding manifest.json",
        "files": {target: f"relax_run_{target}.so" for target in TARGETS},
        "npz": "expected.npz",
        "functions": functions,
        "direct": direct_cases,
        # save_npz stores a 0-d array as 1-d (np.ascontiguousarray): every array's real shape
        "shapes": {key: list(value.shape) for key, value in sorted(arrays.items())},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(functions)} functions x {len(TARGETS)} targets, {len(direct_cases)} direct calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
