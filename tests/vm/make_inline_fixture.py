"""Generate ``tests/vm/artifacts/inline_builtins_cpu.so`` with apache-tvm 0.27's ExecBuilder.

The interpreter runs ``vm.builtin.null_value``, ``make_shape`` and ``tuple_getitem`` inline on
its fast path (src/core/vm/inline_builtins.h) and falls back to the ordinary call for anything
unusual.  The compiler never emits the unusual cases, so this fixture writes the bytecode by hand:
one VM function per case (the ``noop`` kernel is there only because an exported library needs an
object file).  Run with a Python that has ``apache-tvm==0.27.0.post1``::

    /work/venvs/tvm027/bin/python tests/vm/make_inline_fixture.py [--out DIR]

Functions (``x`` a tensor, ``t`` a tuple):

* ``dims(x[a, b]) -> (b, 7, a)``: shape heap filled by match_shape, make_shape of slots and an
  immediate;
* ``void_heap() -> (3, 4)``: make_shape of immediates with ``%void`` as the heap;
* ``void_heap_slot()``: make_shape reading slot 0 of the ``%void`` heap (IndexError);
* ``slot_out_of_range(x[a, b])``: make_shape reading slot 5 of a 2-slot heap (IndexError);
* ``heap_not_tensor(t)``: make_shape with a tuple as the heap (TypeError);
* ``unknown_code(x[a, b])``: make_shape with code 2 (ValueError);
* ``getitem(t) -> t[1]``, ``getitem_out_of_range(t)`` (t[5], IndexError),
  ``getitem_not_tuple(x)`` (TypeError);
* ``freed(x) -> None``: null_value into the argument's register, which is returned.

The cases that succeed are run on apache-tvm's VM before anything is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import tvm
from tvm import relax
from tvm.relax import ExecBuilder
from tvm.script import tirx as T  # noqa: N812


@T.prim_func
def noop(x: T.handle):
    T.func_attr({"global_symbol": "noop"})
    a = T.match_buffer(x, (1,), "float32")
    a[0] = a[0]


def _heap_of_2d(ib: ExecBuilder) -> None:
    """%1 = a 2-slot shape heap holding (a, b) of the 2-D tensor in %0."""
    ib.emit_call("vm.builtin.alloc_shape_heap", args=[ib.vm_state(), ib.imm(2)], dst=ib.r(1))
    ctx = ib.convert_constant("")
    ib.emit_call(
        "vm.builtin.match_shape",
        args=[ib.r(0), ib.r(1), ib.imm(2), ib.imm(1), ib.imm(0), ib.imm(1), ib.imm(1), ctx],
        dst=ib.void_arg(),
    )


def _make_shape(ib: ExecBuilder, name: str, heap: int, pairs: list[tuple[int, int]], num_inputs: int) -> None:
    with ib.function(name, num_inputs=num_inputs):
        if num_inputs and heap == 1:
            _heap_of_2d(ib)
        args = [heap if heap != 1 else ib.r(1), ib.imm(len(pairs))]
        for code, value in pairs:
            args += [ib.imm(code), ib.imm(value)]
        ib.emit_call("vm.builtin.make_shape", args=args, dst=ib.r(2))
        ib.emit_ret(ib.r(2))


def build() -> relax.vm_build.VMExecutable:
    ib = ExecBuilder()
    _make_shape(ib, "dims", 1, [(1, 1), (0, 7), (1, 0)], 1)
    _make_shape(ib, "void_heap", ib.void_arg(), [(0, 3), (0, 4)], 0)
    _make_shape(ib, "void_heap_slot", ib.void_arg(), [(1, 0)], 0)
    _make_shape(ib, "slot_out_of_range", 1, [(1, 5)], 1)
    _make_shape(ib, "unknown_code", 1, [(2, 0)], 1)
    with ib.function("heap_not_tensor", num_inputs=1):
        ib.emit_call("vm.builtin.make_shape", args=[ib.r(0), ib.imm(1), ib.imm(1), ib.imm(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    for name, index in (("getitem", 1), ("getitem_out_of_range", 5), ("getitem_not_tuple", 0)):
        with ib.function(name, num_inputs=1):
            ib.emit_call("vm.builtin.tuple_getitem", args=[ib.r(0), ib.imm(index)], dst=ib.r(1))
            ib.emit_ret(ib.r(1))
    with ib.function("freed", num_inputs=1):
        ib.emit_call("vm.builtin.null_value", args=[], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    return relax.vm_build._vmlink(ib, "llvm", tvm.IRModule({"noop": noop}))


def check_on_apache(path: Path) -> None:
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
    x = tvm.runtime.tensor(np.zeros((2, 3), "float32"))
    assert tuple(vm["dims"](x)) == (3, 7, 2)
    assert tuple(vm["void_heap"]()) == (3, 4)
    assert int(vm["getitem"]((10, 11, 12))) == 11
    assert vm["freed"](x) is None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "artifacts")
    args = parser.parse_args(argv)
    path = args.out / "inline_builtins_cpu.so"
    build().export_library(str(path))
    check_on_apache(path)
    print(f"  {path.name:26s} {path.stat().st_size:8d} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
