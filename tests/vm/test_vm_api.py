"""The Python API of tvm.runtime.vm.VirtualMachine matches apache-tvm 0.27's."""

from __future__ import annotations

import numpy as np
import pytest
from vm_support import device_for

import tvm
from conftest import ARTIFACTS, run_python
from tvm.runtime.vm import VirtualMachine, VMInstrumentReturnKind

MLP = ARTIFACTS / "relax" / "mlp_cpu.so"
MLP_DYN = ARTIFACTS / "relax" / "mlp_dyn_cpu.so"
PARAMS = ("w1", "b1", "w2", "b2")


@pytest.fixture(scope="module")
def mlp_data():
    return dict(np.load(ARTIFACTS / "relax" / "mlp.npz"))


@pytest.fixture(scope="module")
def dyn_data():
    return dict(np.load(ARTIFACTS / "relax" / "mlp_dyn.npz"))


def test_import_is_lazy_and_names_resolve():
    proc = run_python(
        """
        import sys
        import tvm
        assert "tvm.runtime.vm" not in sys.modules
        assert "tvm.relax" not in sys.modules
        VM = tvm.runtime.vm.VirtualMachine
        from tvm.runtime.vm import VirtualMachine
        from tvm.relax import VirtualMachine as RelaxVM
        import tvm.relax
        assert VM is VirtualMachine is RelaxVM is tvm.relax.VirtualMachine
        assert tvm.runtime.vm.VirtualMachine.POOLED_ALLOCATOR == 2
        from tvm import _conflicts
        assert _conflicts.foreign_marker_files() == [], _conflicts.foreign_marker_files()
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok"
    assert "RuntimeWarning" not in proc.stderr


def test_stateful_api_with_named_arguments(dyn_data):
    vm = VirtualMachine(tvm.runtime.load_module(str(MLP_DYN)), tvm.cpu())
    assert vm._get_function_arity("main") == 5
    assert [vm._get_function_param_name("main", i) for i in range(5)] == ["x", "w1", "b1", "w2", "b2"]
    params = {k: dyn_data[k] for k in PARAMS}
    vm.set_input("main", dyn_data["x_n3"], **params)
    vm.invoke_stateful("main")
    logits, hidden = vm.get_outputs("main")
    np.testing.assert_allclose(logits.numpy(), dyn_data["logits_n3"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(hidden.numpy(), dyn_data["hidden_n3"], rtol=1e-4, atol=1e-4)
    # Low-level accessors used by get_outputs.
    assert vm._get_output_arity("main") == 2 and vm._get_output_arity("main", 0) == -1
    with pytest.raises(ValueError, match="cannot return a tuple"):
        vm._get_output("main")
    with pytest.raises(IndexError):
        vm._get_output("main", 2)


def test_params_saved_and_loaded_feed_the_vm(tmp_path, mlp_data):
    params = {k: tvm.runtime.tensor(mlp_data[k]) for k in PARAMS}
    blob = tvm.runtime.save_param_dict(params)
    loaded = tvm.runtime.load_param_dict(blob)
    path = str(tmp_path / "mlp.params")
    tvm.runtime.save_param_dict_to_file(params, path)
    from_file = tvm.runtime.load_param_dict_from_file(path)
    vm = VirtualMachine(tvm.runtime.load_module(str(MLP)), tvm.cpu())
    for p in (loaded, from_file):
        vm.set_input("main", tvm.runtime.tensor(mlp_data["x"]), **{k: p[k] for k in PARAMS})
        vm.invoke_stateful("main")
        np.testing.assert_allclose(vm.get_outputs("main").numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)


def test_numpy_inputs_and_mixed_calls(mlp_data):
    vm = VirtualMachine(tvm.runtime.load_module(str(MLP)), tvm.cpu())
    args = [mlp_data[k] for k in ("x", *PARAMS)]
    out = vm["main"](*args)  # numpy arrays are passed as tensors (DLPack), like apache-tvm
    np.testing.assert_allclose(out.numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)


def test_save_function_and_time_evaluator(mlp_data):
    vm = VirtualMachine(tvm.runtime.load_module(str(MLP)), tvm.cpu())
    args = [tvm.runtime.tensor(mlp_data[k]) for k in ("x", *PARAMS)]
    vm.save_function("main", "main_saved", *args)
    np.testing.assert_allclose(vm["main_saved"]().numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)
    vm.save_function("main", "main_noret", *args, include_return=False)
    assert vm["main_noret"]() is None
    with pytest.raises(ValueError, match="cannot be overridden"):
        vm.save_function("main", "main", *args)

    res = vm.time_evaluator("main", tvm.cpu(), number=3, repeat=4)(*args)
    assert isinstance(res, tvm.runtime.BenchmarkResult)
    assert len(res.results) == 4 and res.mean > 0
    assert len(vm.time_evaluator("main_saved", tvm.cpu(), number=2)().results) == 1
    vm.set_input("main", *args)
    assert vm.time_evaluator("invoke_stateful", tvm.cpu(), number=2, repeat=2)("main").min > 0
    res = vm.time_evaluator("main", tvm.cpu(), min_repeat_ms=5)(*args)
    assert res.mean > 0


def test_set_instrument_sees_every_call_and_can_skip(mlp_data):
    vm = VirtualMachine(tvm.runtime.load_module(str(MLP)), tvm.cpu())
    args = [tvm.runtime.tensor(mlp_data[k]) for k in ("x", *PARAMS)]
    events = []

    def instrument(func, name, before_run, ret_value, *call_args):
        events.append((name, bool(before_run)))
        if name == "vm.builtin.alloc_storage" and before_run:
            assert call_args[3] == "uint8"  # dtypes are shown as strings
        return VMInstrumentReturnKind.NO_OP

    vm.set_instrument(instrument)
    out = vm["main"](*args)
    np.testing.assert_allclose(out.numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)
    names = [n for n, before in events if before]
    assert names.count("matmul") == 1 and names.count("vm.builtin.check_tensor_info") == 5
    assert len(events) == 2 * len(names)

    def skip_add1(func, name, before_run, ret_value, *call_args):
        return VMInstrumentReturnKind.SKIP_RUN if name == "add1" else VMInstrumentReturnKind.NO_OP

    vm.set_instrument(skip_add1)
    out = vm["main"](*args)  # add1 writes the output buffer: skipping it changes the result
    assert not np.allclose(out.numpy(), mlp_data["y"])
    vm.set_instrument(None)
    np.testing.assert_allclose(vm["main"](*args).numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)


def test_device_list_and_memory_cfg(mlp_data):
    mod = tvm.runtime.load_module(str(MLP))
    args = [tvm.runtime.tensor(mlp_data[k]) for k in ("x", *PARAMS)]
    devs = [tvm.cpu(0)]
    for vm in (
        VirtualMachine(mod, devs),
        VirtualMachine(mod, (tvm.cpu(0),), memory_cfg={tvm.cpu(0): "naive"}),
        VirtualMachine(mod, tvm.cpu(), memory_cfg="pooled"),
        VirtualMachine(mod, tvm.device("cpu")),
    ):
        np.testing.assert_allclose(vm["main"](*args).numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)
    assert devs == [tvm.cpu(0)]  # the caller's list is not modified
    # apache-tvm's older profile=True is accepted (every VM can be profiled: test_vm_profiler.py).
    profiled = VirtualMachine(mod, tvm.cpu(), profile=True)
    np.testing.assert_allclose(profiled["main"](*args).numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)
    tvm.get_global_func("vm.builtin.memory_manager.clear")()
    vm = VirtualMachine(mod, tvm.cpu())
    np.testing.assert_allclose(vm["main"](*args).numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)


def test_invoke_closure_and_module_introspection(mlp_data):
    mod = tvm.runtime.load_module(str(MLP))
    assert mod["stats"]().startswith("Relax VM executable statistics:")
    text = mod["as_text"]()
    assert "@main(x, w1, b1, w2, b2)" in text and "call matmul(%0, %1, %6) -> %void" in text
    vm = VirtualMachine(mod, tvm.cpu())
    assert vm.module.kind == "relax.VirtualMachine"
    args = [tvm.runtime.tensor(mlp_data[k]) for k in ("x", *PARAMS)]
    out = vm.invoke_closure(vm["main"], *args)
    np.testing.assert_allclose(out.numpy(), mlp_data["y"], rtol=1e-4, atol=1e-4)


def test_set_input_moves_host_inputs_to_the_device():
    dev = device_for(tvm, "opencl")
    data = dict(np.load(ARTIFACTS / "relax" / "mlp_dyn.npz"))
    vm = VirtualMachine(tvm.runtime.load_module(str(ARTIFACTS / "relax" / "mlp_dyn_opencl.so")), dev)
    vm.set_input("main", data["x_n50"], *[data[k] for k in PARAMS])  # numpy, on the host
    vm.invoke_stateful("main")
    logits, hidden = vm.get_outputs("main")
    assert logits.device.dlpack_device_type() == 4
    np.testing.assert_allclose(logits.numpy(), data["logits_n50"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(hidden.numpy(), data["hidden_n50"], rtol=1e-4, atol=1e-4)
    res = vm.time_evaluator("invoke_stateful", dev, number=2, repeat=2)("main")
    assert len(res.results) == 2
