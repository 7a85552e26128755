"""Generate the extra Relax VM fixtures under ``tests/vm/artifacts`` with apache-tvm 0.27.

The three models of ``tests/artifacts`` (mlp, mlp_dyn, convnet) cover straight-line code. These
fixtures cover the rest of the VM: control flow, VM-to-VM calls, closures, nested tuples,
``vm.builtin.reshape`` and ``make_prim_value``, a kernel that is a *global* function, and
``exec_mode="compiled"`` (``__vmtir__`` functions over AnyLists). Run with a Python that has
``apache-tvm==0.27.0.post1`` installed (apache-tvm is never a dependency of tvm-runtime)::

    /work/venv-tvm027/bin/python tests/vm/make_fixtures.py [--out DIR]

Every CPU artifact is run once with apache-tvm's own VM and checked against numpy (the same
``expected_*`` functions the tests use, in ``vm_models.py``) before anything is written.

Models (``<name>_<target>.so``):

* ``control`` (cpu, opencl): ``main(x, flag)`` branches on a bool tensor (If/Goto,
  ``read_if_cond``), calls the VM function ``scale`` and returns ``(y, (x, y))``;
  ``closure(x, y)`` builds a closure over ``y`` (``make_closure``/``invoke_closure``).
* ``misc`` (cpu, opencl): ``main(x[n, 4])`` reshapes to ``[n * 4]`` and doubles it
  (``reshape``, ``make_prim_value``, shape heap); ``ext(x[4])`` calls the global function
  ``testing.vm.scale2(x, out)``, which the test registers (or leaves out, to see the error).
* ``compiled`` (cpu): an MLP layer built with ``exec_mode="compiled"``, returning
  ``(h, sum(h, axis=1))``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import tvm
from tvm import relax
from tvm.script import ir as I  # noqa: N812
from tvm.script import relax as R  # noqa: N812

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vm_models  # noqa: E402

F32 = "float32"


def _f32(shape: list) -> relax.TensorType:
    return relax.TensorType(shape, F32)


@I.ir_module
class Control:
    @R.function
    def scale(x: R.Tensor((4,), F32), k: R.Tensor((), F32)) -> R.Tensor((4,), F32):  # noqa: N805
        y = R.multiply(x, k)
        return y

    @R.function
    def main(x: R.Tensor((4,), F32), flag: R.Tensor((), "bool")):  # noqa: N805
        cls = Control
        if flag:
            y = cls.scale(x, R.const(2.0, F32))
        else:
            y = R.add(x, R.const(1.0, F32))
        return (y, (x, y))

    @R.function
    def closure(x: R.Tensor((4,), F32), y: R.Tensor((4,), F32)) -> R.Tensor((4,), F32):  # noqa: N805
        @R.function
        def inner(z: R.Tensor((4,), F32)) -> R.Tensor((4,), F32):
            s = R.add(z, y)
            return s

        r = inner(x)
        return r


def build_misc() -> tvm.IRModule:
    bb = relax.BlockBuilder()
    n = tvm.tirx.Var("n", "int64")
    x = relax.Var("x", _f32([n, 4]))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.op.reshape(x, [n * 4]))
            z = bb.emit_output(relax.op.add(y, y))
        bb.emit_func_output(z)
    xe = relax.Var("x", _f32([4]))
    with bb.function("ext", [xe]):
        y = bb.emit(relax.op.call_dps_packed(vm_models.SCALE2, relax.Tuple([xe]), _f32([4])))
        bb.emit_func_output(y)
    return bb.get()


def build_compiled() -> tvm.IRModule:
    bb = relax.BlockBuilder()
    n = tvm.tirx.Var("n", "int64")
    x = relax.Var("x", _f32([n, 16]))
    w = relax.Var("w", _f32([16, 32]))
    b = relax.Var("b", _f32([32]))
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.relu(relax.op.add(relax.op.matmul(x, w), b)))
            out = bb.emit_output(relax.Tuple([h, relax.op.sum(h, axis=[1])]))
        bb.emit_func_output(out)
    return bb.get()


def target_of(name: str) -> tvm.target.Target:
    if name == "cpu":
        return tvm.target.Target("llvm")
    return tvm.target.Target("opencl", host="llvm")


def check_on_apache(path: Path, model: str) -> None:
    """Run the CPU artifact with apache-tvm's VM and compare with numpy."""
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
    for func, args, expected in vm_models.cases(model):
        got = vm[func](*[tvm.runtime.tensor(a) for a in args])
        vm_models.assert_matches(got, expected, f"{path.name}:{func}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "artifacts")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    @tvm.register_global_func(vm_models.SCALE2)
    def _scale2(x: tvm.runtime.Tensor, out: tvm.runtime.Tensor) -> None:
        out.copyfrom(x.numpy() * np.float32(2))

    builds = [
        ("control", "cpu", relax.transform.LambdaLift()(Control), "bytecode"),
        ("control", "opencl", relax.transform.LambdaLift()(Control), "bytecode"),
        ("misc", "cpu", build_misc(), "bytecode"),
        ("misc", "opencl", build_misc(), "bytecode"),
        ("compiled", "cpu", build_compiled(), "compiled"),
    ]
    for model, target, mod, exec_mode in builds:
        built = relax.build(mod, target_of(target), exec_mode=exec_mode)
        path = args.out / f"{model}_{target}.so"
        built.export_library(str(path))
        if target == "cpu":
            check_on_apache(path, model)
        print(f"  {path.name:22s} {path.stat().st_size:8d} bytes  ({exec_mode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
