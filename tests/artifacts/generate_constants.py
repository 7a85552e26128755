"""Generate the weight-residency fixtures under ``tests/artifacts/constants``.

A fixture generator, not part of the runtime: run it with apache-tvm 0.27 (see ``generate.py``)::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_constants.py [--out DIR]

One Relax model whose weights are embedded in the artifact as VM constants (what the frontends
emit with their default ``keep_params_as_input=False``), a two-layer MLP 64 -> 128 -> 64 on a
batch of 4 with ReLU:

* ``main(x)`` returns ``relu(x @ w1 + b1) @ w2 + b2``;
* ``first_weight()`` returns the constant ``w1`` itself, so a test can see where the runtime
  keeps it (inside the library's mapping, or in a copy).

Built for ``llvm`` (``weights_cpu.so``), ``opencl`` and ``webgpu`` (host llvm, dlight schedules).
Compiled kernels assume 64-byte aligned tensor data, and apache-tvm's exporter does not align a
constant's data inside the file: where ``w1`` lands depends on everything written before it.
``weights_aligned_cpu.so`` is the same model with the name of ``main``'s parameter padded until
``w1``'s data starts 64-byte aligned in the file (the padding is recorded in the manifest), so the
runtime can point a tensor into the file for it; in ``weights_cpu.so`` it lands misaligned and
must be copied.  Expected outputs come from numpy; every CPU artifact is also run with
apache-tvm's own VM and checked before anything is written.
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np

import tvm
from tvm import relax

HERE = Path(__file__).resolve().parent
BATCH, D_IN, D_HIDDEN, D_OUT = 4, 64, 128, 64
TENSOR_TYPE_INDEX = 70  # kTVMFFITensor in the executable's constant pool


def make_weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20261126)
    # multiples of 1/64: exact in fp32, so every target computes the same sums
    return {
        "x": (rng.integers(-64, 64, size=(BATCH, D_IN)) / 64).astype("float32"),
        "w1": (rng.integers(-16, 16, size=(D_IN, D_HIDDEN)) / 64).astype("float32"),
        "b1": (rng.integers(-16, 16, size=(D_HIDDEN,)) / 64).astype("float32"),
        "w2": (rng.integers(-16, 16, size=(D_HIDDEN, D_OUT)) / 64).astype("float32"),
        "b2": (rng.integers(-16, 16, size=(D_OUT,)) / 64).astype("float32"),
    }


def expected(w: dict[str, np.ndarray]) -> np.ndarray:
    hidden = np.maximum(w["x"] @ w["w1"] + w["b1"], 0)
    return (hidden @ w["w2"] + w["b2"]).astype("float32")


def make_module(w: dict[str, np.ndarray], param_name: str) -> tvm.IRModule:
    bb = relax.BlockBuilder()
    x = relax.Var(param_name, relax.TensorType((BATCH, D_IN), "float32"))
    w1 = relax.const(w["w1"])
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.relu(relax.op.add(relax.op.matmul(x, w1), relax.const(w["b1"]))))
            y = bb.emit(relax.op.add(relax.op.matmul(h, relax.const(w["w2"])), relax.const(w["b2"])))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    with bb.function("first_weight", []):
        bb.emit_func_output(w1)
    return bb.get()


def compile_for(mod: tvm.IRModule, target: str) -> relax.VMExecutable:
    if target == "llvm":
        return tvm.compile(mod, target="llvm")
    tgt = tvm.target.Target(target, host="llvm")
    with tgt:
        mod = tvm.s_tir.dlight.ApplyDefaultSchedule(tvm.s_tir.dlight.gpu.Fallback())(
            relax.transform.LegalizeOps()(mod)
        )
    return tvm.compile(mod, target=tgt)


def _library_bin_offset(path: Path) -> int:
    """File offset of the __tvm_ffi__library_bin symbol (readelf, as a user would check it)."""
    syms = subprocess.run(["readelf", "-Ws", "--dyn-syms", str(path)], capture_output=True, text=True).stdout
    fields = next(line.split() for line in syms.splitlines() if line.endswith("__tvm_ffi__library_bin"))
    value, section = int(fields[1], 16), int(fields[6])
    headers = subprocess.run(["readelf", "-WS", str(path)], capture_output=True, text=True).stdout
    for line in headers.splitlines():
        parts = line.replace("[ ", "[").split()
        if parts and parts[0] == f"[{section}]":
            addr, offset = int(parts[3], 16), int(parts[4], 16)
            return offset + value - addr
    raise RuntimeError(f"{path}: no section {section}")


def tensor_data_offsets(path: Path) -> list[int]:
    """File offsets of the data of every tensor constant of the executable in ``path``."""
    blob = path.read_bytes()
    pos = _library_bin_offset(path) + 8

    def take(fmt: str) -> tuple:
        nonlocal pos
        out = struct.unpack_from("<" + fmt, blob, pos)
        pos += struct.calcsize("<" + fmt)
        return out

    def string() -> bytes:
        nonlocal pos
        (n,) = take("Q")
        pos += n
        return blob[pos - n : pos]

    for _ in range(2):  # import tree: indptr, child indices
        (n,) = take("Q")
        pos += 8 * n
    while string() != b"relax.VMExecutable":
        (n,) = take("Q")
        pos += n
    take("Q")  # payload size
    take("Q")  # magic
    string()  # version
    (nfunc,) = take("Q")
    for _ in range(nfunc):
        take("i")
        string()
        take("4q")
        (nparams,) = take("Q")
        for _ in range(nparams):
            string()
    (nscopes,) = take("Q")
    for _ in range(nscopes):
        take("q")
        string()
    (nconst,) = take("Q")
    offsets = []
    for _ in range(nconst):
        (kind,) = take("i")
        if kind == TENSOR_TYPE_INDEX:
            take("QQii")
            (ndim,) = take("i")
            take("BBH")
            take(f"{ndim}q")
            (nbytes,) = take("q")
            offsets.append(pos)
            pos += nbytes
        elif kind in (1, 3):  # int, float
            take("q")
        elif kind == 5:  # dtype
            take("BBH")
        elif kind == 69:  # shape
            (n,) = take("Q")
            take(f"{n}q")
        elif kind == 65:  # string
            string()
        else:
            raise RuntimeError(f"unexpected constant kind {kind}")
    return offsets


def check_cpu(path: Path, w: dict[str, np.ndarray]) -> None:
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(w["x"])).numpy(), expected(w))
    np.testing.assert_array_equal(vm["first_weight"]().numpy(), w["w1"])


def export_aligned(w: dict[str, np.ndarray], out: Path) -> int:
    """Pads main's parameter name until w1's data is 64-byte aligned; returns the padding."""
    with tempfile.TemporaryDirectory() as tmp:
        for pad in range(256):
            trial = Path(tmp) / f"trial{pad}.so"
            compile_for(make_module(w, "x" + "_" * pad), "llvm").export_library(str(trial))
            # w1 is the first tensor constant of the pool (main uses it first).
            if tensor_data_offsets(trial)[0] % 64 == 0:
                check_cpu(trial, w)
                out.write_bytes(trial.read_bytes())
                return pad
    raise RuntimeError("no padding of 0..255 aligned w1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "constants")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    w = make_weights()
    np.savez(args.out / "weights.npz", y=expected(w), **w)
    manifest: dict[str, object] = {"model": "weights", "batch": BATCH, "artifacts": {}}
    for target, device in (("llvm", "cpu"), ("opencl", "opencl"), ("webgpu", "webgpu")):
        path = args.out / f"weights_{device}.so"
        compile_for(make_module(w, "x"), target).export_library(str(path))
        if device == "cpu":
            check_cpu(path, w)
        offsets = tensor_data_offsets(path)
        manifest["artifacts"][path.name] = {"device": device, "w1_offset_mod_64": offsets[0] % 64}
    aligned = args.out / "weights_aligned_cpu.so"
    pad = export_aligned(w, aligned)
    manifest["artifacts"][aligned.name] = {"device": "cpu", "w1_offset_mod_64": 0, "param_name_padding": pad}
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps(manifest, indent=2))


if __name__ == "__main__":
    main()
