"""The extra VM fixtures of make_fixtures.py: control flow, VM-to-VM calls, closures, nested
tuples, reshape, global-function kernels and exec_mode="compiled"."""

from __future__ import annotations

import numpy as np
import pytest
import vm_models
from vm_support import VM_ARTIFACTS, device_for

import tvm
from tvm.runtime.vm import VirtualMachine

BUILT = [("control", "cpu"), ("control", "opencl"), ("misc", "cpu"), ("misc", "opencl"), ("compiled", "cpu")]


@pytest.fixture(scope="module", autouse=True)
def scale2():
    """The global function `misc`'s `ext` calls (destination-passing style)."""

    def impl(x, out):
        out.copyfrom(x.numpy() * np.float32(2))

    tvm.register_global_func(vm_models.SCALE2, impl, override=True)
    yield
    import tvm_ffi

    tvm_ffi.registry.remove_global_func(vm_models.SCALE2)


def _load(model, target):
    return tvm.runtime.load_module(str(VM_ARTIFACTS / f"{model}_{target}.so"))


@pytest.mark.parametrize(("model", "target"), BUILT, ids=[f"{m}-{t}" for m, t in BUILT])
def test_fixture_matches_numpy(model, target):
    dev = device_for(tvm, target)
    vm = VirtualMachine(_load(model, target), dev)
    for func, args, expected in vm_models.cases(model):
        got = vm[func](*[tvm.runtime.tensor(a, dev) for a in args])
        vm_models.assert_matches(got, expected, f"{model}_{target}:{func}")


def test_branches_and_nested_tuples_through_stateful_api():
    vm = VirtualMachine(_load("control", "cpu"), tvm.cpu())
    for func, args, expected in vm_models.cases("control"):
        vm.set_input(func, *args)  # numpy inputs are converted like apache-tvm does
        vm.invoke_stateful(func)
        out = vm.get_outputs(func)
        vm_models.assert_matches(out, expected, func)
        if func == "main":
            assert isinstance(out, tuple) and isinstance(out[1], tuple)
            assert isinstance(out[1][0], tvm.runtime.Tensor)


def test_executable_listing_shows_control_flow():
    mod = _load("control", "cpu")
    text = mod["as_text"]()
    assert "@main(x, flag)" in text
    assert " if %" in text and " goto " in text
    assert "vm.builtin.make_closure" in text and "vm.builtin.invoke_closure" in text
    assert mod["has_function"]("closure") and not mod["has_function"]("nope")


def test_closure_values_can_be_invoked_from_python():
    vm = VirtualMachine(_load("control", "cpu"), tvm.cpu())
    x = np.arange(4, dtype="float32")
    k = tvm.runtime.tensor(np.array(3.0, dtype="float32"))
    # `scale` is a VM function; the module returns it as a callable and as a closure value.
    out = vm["scale"](tvm.runtime.tensor(x), k)
    np.testing.assert_allclose(out.numpy(), x * 3)
    out = vm.invoke_closure(vm["scale"], tvm.runtime.tensor(x), k)
    np.testing.assert_allclose(out.numpy(), x * 3)


def test_compiled_mode_uses_the_anylist_c_api():
    mod = _load("compiled", "cpu")
    assert "compiled VM function" in mod["as_text"]()
    vm = VirtualMachine(mod, tvm.cpu())
    for _ in range(50):
        for func, args, expected in vm_models.cases("compiled"):
            vm_models.assert_matches(vm[func](*args), expected, func)


def test_anylist_symbols_are_exported_by_the_core():
    from tvm import _core

    for name in (
        "TVMBackendAnyListSetPackedArg",
        "TVMBackendAnyListResetItem",
        "TVMBackendAnyListMoveFromPackedReturn",
    ):
        assert hasattr(_core.LIB, name), name


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_reshape_of_symbolic_shapes(target):
    dev = device_for(tvm, target)
    vm = VirtualMachine(_load("misc", target), dev)
    for n in (1, 7, 64):
        x = np.arange(n * 4, dtype="float32").reshape(n, 4)
        out = vm["main"](tvm.runtime.tensor(x, dev))
        assert tuple(out.shape) == (n * 4,)
        np.testing.assert_allclose(out.numpy(), x.reshape(-1) * 2)
