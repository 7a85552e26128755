"""The same artifact loaded more than once while an earlier load is alive.

The dynamic loader maps a file once per process, and apache-tvm's host code caches the
functions it looks up (kernels, ``__tvm_set_device``) in statics of that mapping, owned by the
module that filled them.  Since released modules are unloaded, two modules sharing one mapping
would call functions freed with the other: each load of a file that is already loaded gets a
mapping of its own.  Found by tests/faults/stress.py (concurrent loads, OpenCL and Vulkan).
"""

from __future__ import annotations

import gc
import shutil

import numpy as np
import pytest
from fault_support import ADD_ARTIFACT, device

import tvm


def add_checker(kind: str):
    dev = device(kind)
    rng = np.random.default_rng(7)
    a_np, b_np = rng.standard_normal((2, 1024)).astype("float32")
    a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)

    def check(mod) -> None:
        c = tvm.runtime.empty((1024,), "float32", dev)
        mod["add"](a, b, c)
        np.testing.assert_array_equal(c.numpy(), a_np + b_np)

    return check


def churn(kind: str) -> None:
    """Load and drop other modules so freed memory is reused (a dangling call then misbehaves)."""
    for _ in range(3):
        tvm.runtime.load_module(str(ADD_ARTIFACT[kind]).replace("add.so", "matmul.so"))
    gc.collect()


@pytest.mark.parametrize("kind", ["cpu", "opencl", "vulkan"])
@pytest.mark.parametrize("released", ["first", "second"])
def test_second_load_outlives_the_first(kind, released):
    check = add_checker(kind)
    first = tvm.runtime.load_module(str(ADD_ARTIFACT[kind]))
    if released == "first":
        check(first)  # the first module fills the library's function caches, then goes
        second = tvm.runtime.load_module(str(ADD_ARTIFACT[kind]))
        del first
        survivor = second
    else:
        second = tvm.runtime.load_module(str(ADD_ARTIFACT[kind]))
        check(second)  # the second one fills them (and was the library's context), then goes
        del second
        survivor = first
    churn(kind)
    for _ in range(3):
        check(survivor)


@pytest.mark.parametrize("kind", ["cpu", "opencl"])
def test_many_live_loads_of_one_file(kind):
    check = add_checker(kind)
    mods = [tvm.runtime.load_module(str(ADD_ARTIFACT[kind])) for _ in range(4)]
    for m in mods:
        check(m)
    while mods:
        mods.pop(0)
        churn(kind)
        for m in mods:
            check(m)


def test_kept_module_and_released_module_of_one_file(tmp_path):
    check = add_checker("cpu")
    path = tmp_path / "add_kept.so"  # a copy: this process keeps it mapped for good
    shutil.copy(ADD_ARTIFACT["cpu"], path)
    kept = tvm.runtime.load_module(str(path), keep_module_alive=True)
    released = tvm.runtime.load_module(str(path))
    check(released)
    del released
    churn("cpu")
    check(kept)
