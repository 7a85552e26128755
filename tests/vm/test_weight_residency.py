"""Weights embedded in an artifact are resident once (issue 26).

`tvm.runtime.load_module` maps the library file and parses the Relax executable in place: no
weight is read at load time.  A VM on the CPU points a constant into the mapping when its data is
64-byte aligned in the file (compiled kernels assume that alignment) and copies it once otherwise;
a VM on another device uploads each constant straight from the mapping.  Fixtures:
tests/artifacts/constants (generate_constants.py): the same MLP with embedded weights, built so that
its first weight lands 64-byte aligned in one CPU artifact and misaligned in the other.

Checks that look at the process (/proc/self/maps, lifetimes) run in a fresh interpreter.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from backend_testing.devices import device_or_skip

import tvm
from conftest import ARTIFACTS, run_python

CONSTANTS = ARTIFACTS / "constants"
DATA = np.load(CONSTANTS / "weights.npz")
ALIGNED = CONSTANTS / "weights_aligned_cpu.so"
MISALIGNED = CONSTANTS / "weights_cpu.so"

# Prints where first_weight()'s data lies: inside a mapping of the artifact or not.
WHERE = """
import gc, json, numpy as np, tvm
path = {path!r}
mod = tvm.runtime.load_module(path)
before = dict(mod["constant_stats"]())
vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
w = vm["first_weight"]()
ptr = np.from_dlpack(w).ctypes.data
def mapped(p):
    for line in open("/proc/self/maps"):
        fields = line.split()
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        if lo <= p < hi and fields[-1] == path:
            return True
    return False
print(json.dumps({{"before": before, "after": dict(mod["constant_stats"]()),
                  "in_file": mapped(ptr), "aligned": ptr % 64 == 0}}))
"""


def _where(path) -> dict:
    return json.loads(run_python(WHERE.format(path=str(path))).stdout.strip().splitlines()[-1])


def test_loading_reads_no_weight():
    report = _where(MISALIGNED)
    assert report["before"] == {
        "tensors": 4,  # w1, b1, w2, b2
        "aliased": 0,
        "copied": 0,
        "stored": 0,
        "uploaded": 0,
        "aliased_bytes": 0,
        "copied_bytes": 0,
        "stored_bytes": 0,
    }


def test_cpu_constant_aligned_in_the_file_points_into_it():
    report = _where(ALIGNED)
    assert report["in_file"] and report["aligned"]
    after = report["after"]
    assert after["aliased"] >= 1 and after["aliased_bytes"] >= DATA["w1"].nbytes
    assert after["aliased"] + after["copied"] == after["tensors"]


def test_cpu_constant_misaligned_in_the_file_is_copied_once_aligned():
    report = _where(MISALIGNED)
    assert not report["in_file"] and report["aligned"]
    after = report["after"]
    assert after["copied"] == after["tensors"] and after["uploaded"] == 0


@pytest.mark.parametrize("path", [ALIGNED, MISALIGNED], ids=["aligned", "misaligned"])
def test_cpu_results_match_numpy(path):
    mod = tvm.runtime.load_module(str(path))
    vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(DATA["x"])).numpy(), DATA["y"])
    np.testing.assert_array_equal(vm["first_weight"]().numpy(), DATA["w1"])
    # A second VM over the same executable shares the host constants.
    again = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
    np.testing.assert_array_equal(again["main"](tvm.runtime.tensor(DATA["x"])).numpy(), DATA["y"])


LIFETIME = """
import gc, json, numpy as np, tvm
path = {path!r}
def mapped():
    return sorted({{l.split()[1] for l in open("/proc/self/maps") if l.rstrip().endswith(path)}})
mod = tvm.runtime.load_module(path)
vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
w = vm["first_weight"]()
del vm, mod
gc.collect()
while_held = mapped()
values = w.numpy()
del w
gc.collect()
ok = bool((values == np.load({npz!r})["w1"]).all())
print(json.dumps({{"while_held": while_held, "after": mapped(), "ok": ok}}))
"""


def test_an_aliased_constant_keeps_the_file_mapped_until_released():
    code = LIFETIME.format(path=str(ALIGNED), npz=str(CONSTANTS / "weights.npz"))
    report = json.loads(run_python(code).stdout.strip().splitlines()[-1])
    # The library's code is unloaded with the module; the constant keeps only the file mapping.
    assert report["while_held"] == ["rw-p"], report
    assert report["after"] == [], report
    assert report["ok"]


WRITE = """
import gc, json, numpy as np, tvm
path = {path!r}
vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(path), tvm.cpu())
w = vm["first_weight"]()
view = np.from_dlpack(w)
view[:] = 7.0
seen_by_vm = float(vm["first_weight"]().numpy()[0, 0])
del vm, w, view
gc.collect()
fresh = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(path), tvm.cpu())
print(json.dumps({{"seen_by_vm": seen_by_vm, "reloaded": float(fresh["first_weight"]().numpy()[0, 0])}}))
"""


def test_writes_to_an_aliased_constant_stay_in_the_process():
    digest = hashlib.sha256(ALIGNED.read_bytes()).hexdigest()
    report = json.loads(run_python(WRITE.format(path=str(ALIGNED))).stdout.strip().splitlines()[-1])
    # Copy-on-write: the VM sees the write (as apache-tvm's mutable constants would) ...
    assert report["seen_by_vm"] == 7.0
    # ... but the file does not, nor a later load of it.
    assert report["reloaded"] == float(DATA["w1"][0, 0])
    assert hashlib.sha256(ALIGNED.read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("api", ["opencl", "webgpu"])
def test_device_constants_upload_straight_from_the_file(api):
    dev_types = {"opencl": 4, "webgpu": 15}
    dev = device_or_skip(tvm, getattr(tvm, api)(0), dev_types[api], api)
    mod = tvm.runtime.load_module(str(CONSTANTS / f"weights_{api}.so"))
    vm = tvm.runtime.vm.VirtualMachine(mod, dev)
    stats = dict(mod["constant_stats"]())
    assert stats["uploaded"] == stats["tensors"] > 0
    assert stats["copied"] == stats["aliased"] == 0  # no host copy was made
    y = vm["main"](tvm.runtime.tensor(DATA["x"], dev)).numpy()
    np.testing.assert_allclose(y, DATA["y"], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(vm["first_weight"]().numpy(), DATA["w1"])
