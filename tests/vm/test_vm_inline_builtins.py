"""The builtins the interpreter runs inline (null_value, make_shape, tuple_getitem;
src/core/vm/inline_builtins.h) behave exactly as the ordinary calls: same results, and for
anything unusual the ordinary call runs and raises its own error.  The fixture's bytecode is
written by hand (tests/vm/make_inline_fixture.py) because the compiler never emits these cases.
Instruments, the profiler and a global registered over a builtin's name still see every call.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from vm_support import VM_ARTIFACTS

import tvm
from tvm.runtime.vm import VirtualMachine

FIXTURE = VM_ARTIFACTS / "inline_builtins_cpu.so"


@pytest.fixture(scope="module")
def vm() -> VirtualMachine:
    return VirtualMachine(tvm.runtime.load_module(str(FIXTURE)), tvm.cpu())


def _x(*shape: int) -> tvm.runtime.Tensor:
    return tvm.runtime.tensor(np.zeros(shape, "float32"))


def test_make_shape_follows_the_heap_from_call_to_call(vm):
    # The operands are decoded once at load; the heap is read on every run.
    first = vm["dims"](_x(2, 3))
    assert tuple(first) == (3, 7, 2)
    assert tuple(vm["dims"](_x(2, 3))) == (3, 7, 2)
    assert tuple(vm["dims"](_x(5, 1))) == (1, 7, 5)
    assert tuple(vm["dims"](_x(2, 3))) == (3, 7, 2)
    assert tuple(first) == (3, 7, 2)  # an earlier result is never changed


def test_make_shape_of_immediates_with_void_heap(vm):
    assert tuple(vm["void_heap"]()) == (3, 4)


@pytest.mark.parametrize(
    ("func", "arg", "error", "message"),
    [
        ("void_heap_slot", None, IndexError, r"shape heap slot 0 out of range \(heap has 0 slots\)"),
        ("slot_out_of_range", "x", IndexError, r"shape heap slot 5 out of range \(heap has 2 slots\)"),
        ("heap_not_tensor", "t", TypeError, r"shape heap must be a tensor, got ffi.Array"),
        ("unknown_code", "x", ValueError, r"make_shape: unknown code 2"),
        ("getitem_out_of_range", "t", IndexError, r"tuple_getitem: index 5 out of range for a tuple of 3"),
        ("getitem_not_tuple", "x", TypeError, r"vm.builtin.tuple_getitem expects a tuple, got ffi.Tensor"),
    ],
)
def test_unusual_operands_raise_the_ordinary_error(vm, func, arg, error, message):
    args = {"x": [_x(2, 3)], "t": [(10, 11, 12)], None: []}[arg]
    for _ in range(2):  # the same error on a second run: the fallback leaves nothing behind
        with pytest.raises(error, match=message):
            vm[func](*args)
    assert tuple(vm["dims"](_x(2, 3))) == (3, 7, 2)  # the VM still runs afterwards


def test_tuple_getitem_and_null_value(vm):
    assert int(vm["getitem"]((10, 11, 12))) == 11
    assert vm["freed"](_x(1)) is None


def test_instrument_and_profiler_see_inlined_calls(vm):
    seen: Counter = Counter()

    def instrument(func, name, before, ret, *rest):
        if before:
            seen[name] += 1

    vm.set_instrument(instrument)
    try:
        assert tuple(vm["dims"](_x(2, 3))) == (3, 7, 2)
        assert vm["freed"](_x(1)) is None
        assert int(vm["getitem"]((10, 11, 12))) == 11
    finally:
        vm.set_instrument(None)
    assert seen["vm.builtin.make_shape"] == 1
    assert seen["vm.builtin.null_value"] == 1
    assert seen["vm.builtin.tuple_getitem"] == 1
    report = vm.profile("dims", _x(2, 3))
    names = [c.name for c in report.calls]
    assert names.count("vm.builtin.make_shape") == 1, names


def test_a_global_registered_over_a_builtin_is_called(vm):
    # The fast path inlines only the runtime's own registration: a VM made while another
    # function holds the name calls that one.
    original = tvm.get_global_func("vm.builtin.make_shape")
    calls = []

    def replacement(*args):
        calls.append(len(args))
        return original(*args)

    tvm.register_global_func("vm.builtin.make_shape", replacement, override=True)
    try:
        other = VirtualMachine(tvm.runtime.load_module(str(FIXTURE)), tvm.cpu())
        assert tuple(other["dims"](_x(2, 3))) == (3, 7, 2)
        assert calls == [8]
    finally:
        tvm.register_global_func("vm.builtin.make_shape", original, override=True)
    again = VirtualMachine(tvm.runtime.load_module(str(FIXTURE)), tvm.cpu())
    assert tuple(again["dims"](_x(2, 3))) == (3, 7, 2)
    assert calls == [8]
