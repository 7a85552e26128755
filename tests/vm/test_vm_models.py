"""Real apache-tvm 0.27 Relax models (tests/artifacts/relax, manifest kind "vm") run through
tvm.runtime.vm.VirtualMachine on every available device and match numpy."""

from __future__ import annotations

import numpy as np
import pytest
from vm_support import device_for, run_case_call, vm_cases

import tvm
from conftest import ARTIFACTS
from tvm.runtime.vm import VirtualMachine

TARGETS = ("cpu", "opencl", "cuda")
CASES = [(t, c) for t in TARGETS for c in vm_cases(t)]


def _check(case_, outputs):
    for got, expected in outputs:
        np.testing.assert_allclose(got, expected, rtol=case_["rtol"], atol=case_["atol"])


@pytest.mark.parametrize(("target", "case_"), CASES, ids=[f"{t}-{c['name']}" for t, c in CASES])
@pytest.mark.parametrize("memory_cfg", [None, "naive"])
def test_model_matches_numpy(target, case_, memory_cfg):
    dev = device_for(tvm, target)
    mod = tvm.runtime.load_module(str(ARTIFACTS / case_["file"]))
    assert mod.kind == "relax.VMExecutable"
    vm = VirtualMachine(mod, dev, memory_cfg=memory_cfg)
    for _ in range(3):  # repeated calls reuse pooled storage
        for call in case_["calls"]:
            outputs = run_case_call(tvm, vm, call, dev)
            _check(case_, outputs)
            for got, _ in outputs:
                assert got.dtype == np.float32


def test_every_model_is_covered_on_cpu_and_opencl():
    for target in ("cpu", "opencl"):
        names = {c["name"] for c in vm_cases(target)}
        assert {"mlp", "mlp_dyn", "convnet"} <= names, target


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_symbolic_batch_two_sizes_returns_tuple_on_device(target):
    dev = device_for(tvm, target)
    (case_,) = [c for c in vm_cases(target) if c["name"] == "mlp_dyn"]
    vm = VirtualMachine(tvm.runtime.load_module(str(ARTIFACTS / case_["file"])), dev)
    batches = set()
    for call in case_["calls"]:
        data = np.load(ARTIFACTS / call["npz"])
        args = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
        out = vm["main"](*args)
        assert len(out) == 2
        for tensor, key in zip(out, call["outputs"]):
            assert tensor.device.dlpack_device_type() == dev.dlpack_device_type()
            np.testing.assert_allclose(tensor.numpy(), data[key], rtol=case_["rtol"], atol=case_["atol"])
        batches.add(out[0].shape[0])
    assert batches == {3, 50}


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_embedded_constants_are_placed_on_the_device(target):
    dev = device_for(tvm, target)
    (case_,) = [c for c in vm_cases(target) if c["name"] == "convnet"]
    mod = tvm.runtime.load_module(str(ARTIFACTS / case_["file"]))
    assert "tensor[4, 3, 3, 3] float32" in mod["stats"]()
    vm = VirtualMachine(mod, dev)
    _check(case_, run_case_call(tvm, vm, case_["calls"][0], dev))


def test_outputs_outlive_the_vm_and_are_independent():
    (case_,) = [c for c in vm_cases("cpu") if c["name"] == "mlp"]
    call = case_["calls"][0]
    data = np.load(ARTIFACTS / call["npz"])
    vm = VirtualMachine(tvm.runtime.load_module(str(ARTIFACTS / case_["file"])), tvm.cpu())
    args = [tvm.runtime.tensor(data[a["key"]]) for a in call["args"]]
    first = vm["main"](*args)
    second = vm["main"](*args)
    assert not first.same_as(second)
    del vm
    np.testing.assert_allclose(first.numpy(), data["y"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(second.numpy(), data["y"], rtol=1e-4, atol=1e-4)


def test_two_vms_of_one_module_and_many_calls():
    (case_,) = [c for c in vm_cases("cpu") if c["name"] == "mlp_dyn"]
    mod = tvm.runtime.load_module(str(ARTIFACTS / case_["file"]))
    vms = [VirtualMachine(mod, tvm.cpu()), VirtualMachine(mod, tvm.cpu(), memory_cfg="naive")]
    for _ in range(200):
        for vm in vms:
            for call in case_["calls"]:
                _check(case_, run_case_call(tvm, vm, call, tvm.cpu()))


def test_one_vm_shared_by_threads():
    import threading

    (case_,) = [c for c in vm_cases("cpu") if c["name"] == "mlp_dyn"]
    vm = VirtualMachine(tvm.runtime.load_module(str(ARTIFACTS / case_["file"])), tvm.cpu())
    errors = []

    def worker(call):
        try:
            for _ in range(100):
                _check(case_, run_case_call(tvm, vm, call, tvm.cpu()))
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(case_["calls"][i % 2],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
