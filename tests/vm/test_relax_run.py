"""`relax.run.*`: R.unique, R.nonzero, R.print and R.assert_op in models compiled by apache-tvm 0.27.

tests/artifacts/relax_run holds one Relax module compiled for llvm, OpenCL and WebGPU whose
functions compute on the device and then call the `relax.run` functions apache-tvm 0.27 registers
from its Python package (tvm-runtime: src/core/vm/relax_run.cc and tvm/runtime/_relax_run.py).
Expected values, dtypes, shapes and printed text are what 0.27's own VM produced
(tests/artifacts/generate_relax_run.py); like 0.27, every relax.run result lives on the CPU.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from backend_testing.devices import device_or_skip

import tvm
from conftest import ARTIFACTS

RELAX_RUN = ARTIFACTS / "relax_run"
MANIFEST = json.loads((RELAX_RUN / "manifest.json").read_text())
EXPECTED = np.load(RELAX_RUN / MANIFEST["npz"])
DEVICE_TYPES = {"cpu": (1, "CPU"), "opencl": (4, "OpenCL"), "webgpu": (15, "WebGPU")}
CASES = [(f["function"], t) for f in MANIFEST["functions"] for t in f["targets"]]
FAILING = [(f["function"], t) for f in MANIFEST["functions"] if "failing" in f for t in f["targets"]]


def expected(key: str) -> np.ndarray:
    return EXPECTED[key].reshape(MANIFEST["shapes"][key])  # the npz keeps 0-d arrays as 1-d


def spec(function: str) -> dict[str, Any]:
    (found,) = [f for f in MANIFEST["functions"] if f["function"] == function]
    return found


def arguments(inputs: list[dict[str, str]], dev: Any) -> list[Any]:
    """Tensors on `dev`; a `prim` input is passed as a Python scalar (a Relax PrimValue)."""
    return [
        expected(i["key"]).item() if i["kind"] == "prim" else tvm.runtime.tensor(expected(i["key"]), dev)
        for i in inputs
    ]


def flatten(value: Any) -> list[Any]:
    if isinstance(value, tvm.runtime.Tensor):
        return [value]
    return [t for item in value for t in flatten(item)]


def assert_same(got: tvm.runtime.Tensor, key: str) -> None:
    want = expected(key)
    value = got.numpy()
    assert (str(value.dtype), value.shape) == (str(want.dtype), want.shape), key
    np.testing.assert_array_equal(value, want, err_msg=key)  # NaN matches NaN


_VMS: dict[str, Any] = {}


def vm_on(target: str) -> tuple[Any, Any]:
    """The module's VirtualMachine on the target's device (loaded once per target)."""
    device_type, api = DEVICE_TYPES[target]
    dev = device_or_skip(tvm, tvm.device(device_type, 0), device_type, api)
    if target not in _VMS:
        lib = tvm.runtime.load_module(str(RELAX_RUN / MANIFEST["files"][target]))
        _VMS[target] = tvm.runtime.vm.VirtualMachine(lib, dev)
    return _VMS[target], dev


@pytest.mark.parametrize("function, target", CASES, ids=[f"{t}-{f}" for f, t in CASES])
def test_compiled_model_matches_apache_tvm(function, target, capfd):
    vm, dev = vm_on(target)
    case_ = spec(function)
    args = arguments(case_["inputs"], dev)
    capfd.readouterr()
    outputs = flatten(vm[function](*args))
    assert capfd.readouterr().out == case_["printed"]
    assert len(outputs) == len(case_["outputs"])
    for got, key in zip(outputs, case_["outputs"]):
        assert_same(got, key)
        if function.startswith(("unique", "nonzero")):  # the others return a kernel's output
            assert got.device == tvm.cpu(0), f"{key}: relax.run results live on the CPU, as in 0.27"


@pytest.mark.parametrize("function, target", FAILING, ids=[f"{t}-{f}" for f, t in FAILING])
def test_failed_assert_raises_the_formatted_message(function, target, capfd):
    vm, dev = vm_on(target)
    failing = spec(function)["failing"]
    with pytest.raises(AssertionError) as info:
        vm[function](*arguments(failing["inputs"], dev))
    assert type(info.value).__name__ == failing["error"]
    assert str(info.value) == failing["message"]
    assert capfd.readouterr().out == "", "nothing is printed after the failed assert"


def test_webgpu_build_leaves_out_only_what_0_27_cannot_compile_for_webgpu():
    skipped = {f["function"]: f["not_on"]["webgpu"] for f in MANIFEST["functions"] if "not_on" in f}
    assert set(skipped) == {"nonzero_bool", "assert_on_device"}
    assert all("array<i8>" in why for why in skipped.values())


@pytest.mark.parametrize("case_", MANIFEST["direct"], ids=[c["case"] for c in MANIFEST["direct"]])
def test_direct_call_matches_apache_tvm(case_):
    """More element types, 0-d and empty inputs, through the registered functions themselves."""
    func = tvm.get_global_func(case_["function"])
    if case_["input"] is None:
        result = func(tvm.runtime.ShapeTuple(case_["args"][0]))
    else:
        result = func(tvm.runtime.tensor(expected(case_["input"])), *case_["args"])
    assert isinstance(result, tvm.runtime.Tensor) != case_["is_tuple"]
    outputs = flatten(result)
    assert len(outputs) == len(case_["outputs"])
    for got, key in zip(outputs, case_["outputs"]):
        assert_same(got, key)


def test_unique_bad_arguments_are_clear_errors():
    unique = tvm.get_global_func("relax.run.unique")
    x = tvm.runtime.tensor(np.arange(6, dtype="int32").reshape(2, 3))
    with pytest.raises(IndexError, match="axis 2 is out of bounds for a tensor of dimension 2"):
        unique(x, 1, 0, 0, 0, 2)
    with pytest.raises(TypeError, match=r"takes \(x, sorted, return_index"):
        unique(x, 1)
    with pytest.raises(TypeError, match="element type float8_e4m3fn is not supported"):
        unique(tvm.runtime.empty((2,), "float8_e4m3fn"), 1, 0, 0, 0)
