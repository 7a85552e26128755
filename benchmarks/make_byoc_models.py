"""The models of benchmarks/byoc_bench.py, made by apache-tvm 0.27 (run with its venv's python).

    python benchmarks/make_byoc_models.py --out results/byoc_models

Each workload exists twice, with the same weights embedded as constants:

* ``<name>_llvm.so``: the Relax model, weights bound as constants, compiled by apache-tvm 0.27
  for ``llvm`` with its default pipeline: what a user gets without an external codegen;
* ``<name>_dnnl.so``: the same computation offloaded to one ``dnnl_json`` module, assembled in
  0.27's format by tests/artifacts/generate_byoc.py's helpers (the PyPI compiler has no DNNL
  codegen; see that file's docstring), weights handed over by the ``const_loader``.

``<name>.npz`` holds the input and apache-tvm's output of the llvm model, which every run of
either variant must reproduce.  ``models.json`` lists the workloads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import tvm
from tvm import relax
from tvm.script import relax as R

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "artifacts"))
import generate_byoc as byoc  # noqa: E402  (the 0.27-format writers of the BYOC fixtures)

RNG = np.random.default_rng(20261127)


def _llvm_model(x_shape, w_shape, b_shape, layer):
    """``main(x, w, b) = layer(x, w, b)``, the llvm variant before its weights are bound."""
    params = [
        relax.Var(n, relax.TensorType(s, "float32")) for n, s in zip("xwb", (x_shape, w_shape, b_shape))
    ]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            y = bb.emit_output(layer(*params), name_hint="y")
        bb.emit_func_output(y)
    return bb.get()


def _conv_bias_relu(x, w, b):
    return relax.op.nn.relu(relax.op.add(relax.op.nn.conv2d(x, w, padding=(1, 1)), b))


def _dense_bias_gelu(x, w, b):
    return relax.op.nn.gelu(relax.op.add(relax.op.matmul(x, relax.op.permute_dims(w)), b))


def _offloaded(symbol, in_shape, out_shape):
    """A Relax model whose one call is the external function ``symbol``."""

    @tvm.script.ir_module
    class Offloaded:
        @R.function
        def main(x: R.Tensor(in_shape, "float32")):
            with R.dataflow():
                y = R.call_dps_packed(symbol, (x,), out_ty=R.Tensor(out_shape, "float32"))
                R.output(y)
            return y

    return Offloaded


def _dnnl_graph(symbol, op, in_shape, w, b, out_shape, attrs):
    g = byoc.Graph()
    x = g.input("x", in_shape)
    wn = g.const(f"{symbol}_dnnl_const_0", w.shape)
    bn = g.const(f"{symbol}_dnnl_const_1", b.shape)
    y = g.kernel(op, [x, wn, bn], out_shape, attrs)
    return (symbol, g.to_json([y]), g.consts), {g.consts[0]: w, g.consts[1]: b}


WORKLOADS = {
    "conv3x3": {
        "description": "conv2d 3x3 pad 1 + bias + relu, 1x32x56x56 -> 64 channels",
        "dims": (1, 32, 56, 64),
    },
    "dense": {
        "description": "dense + bias + gelu, 16x1024 @ 1024 -> 1024",
        "dims": (16, 1024, 1024),
    },
}


def make(name: str, out: Path) -> dict:
    spec = WORKLOADS[name]
    if name == "conv3x3":
        n, ci, hw, co = spec["dims"]
        in_shape, out_shape = (n, ci, hw, hw), (n, co, hw, hw)
        w = RNG.standard_normal((co, ci, 3, 3)).astype("float32") * 0.1
        b = RNG.standard_normal((1, co, 1, 1)).astype("float32")
        llvm_mod = _llvm_model(in_shape, w.shape, b.shape, _conv_bias_relu)
        op, attrs, symbol = "dnnl.conv2d_bias_relu", byoc.CONV_ATTRS, byoc.CONV
    else:
        n, k, units = spec["dims"]
        in_shape, out_shape = (n, k), (n, units)
        w = RNG.standard_normal((units, k)).astype("float32") * 0.03
        b = RNG.standard_normal((units,)).astype("float32")
        llvm_mod = _llvm_model(in_shape, w.shape, b.shape, _dense_bias_gelu)
        op, attrs, symbol = "dnnl.dense_bias_gelu", {"units": units, "out_dtype": ""}, byoc.DENSE
    x = RNG.standard_normal(in_shape).astype("float32")

    llvm_path = out / f"{name}_llvm.so"
    bound = relax.transform.BindParams("main", {"w": w, "b": b})(llvm_mod)
    tvm.compile(bound, "llvm").export_library(str(llvm_path))
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(llvm_path)), tvm.cpu())
    expected = vm["main"](tvm.runtime.tensor(x)).numpy()

    module, consts = _dnnl_graph(symbol, op, in_shape, w, b, out_shape, attrs)
    exe = tvm.compile(_offloaded(symbol, in_shape, out_shape), "llvm")
    const_loader = tvm.get_global_func("ffi.Module.create.const_loader")(
        {k: tvm.runtime.tensor(v) for k, v in consts.items()}, {symbol: module[2]}
    )
    dnnl_path = out / f"{name}_dnnl.so"
    byoc.export_with_external(
        exe, const_loader, [("dnnl_json", byoc.json_module_payload(*module))], dnnl_path
    )
    np.savez(out / f"{name}.npz", x=x, expected=expected)
    return {
        "name": name,
        "description": spec["description"],
        "llvm": llvm_path.name,
        "dnnl": dnnl_path.name,
        "npz": f"{name}.npz",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    models = [make(name, out) for name in WORKLOADS]
    (out / "models.json").write_text(
        json.dumps({"tvm_version": tvm.__version__, "models": models}, indent=2) + "\n"
    )
    print(f"wrote {len(models)} workloads to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
