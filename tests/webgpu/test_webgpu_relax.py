"""Relax models compiled by apache-tvm 0.27 for `webgpu` (default pipeline: dlight GPU
schedules) run on the Relax VM with numpy-matching results."""

from __future__ import annotations

import numpy as np
import pytest
from backend_testing.runners import check_relax_case
from webgpu_support import WGPU_ARTIFACTS, artifact, webgpu_device, wgpu_cases

import tvm

MODELS = wgpu_cases("vm")


@pytest.fixture(scope="module")
def dev():
    return webgpu_device(tvm)


@pytest.mark.parametrize("case_", MODELS, ids=[c["name"] for c in MODELS])
def test_model_matches_numpy(case_, dev):
    check_relax_case(tvm, case_, tvm.runtime.load_module(artifact(case_["name"])), dev)


def test_dynamic_batch_sizes_alternate(dev):
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(artifact("mlp_dyn")), dev)
    data = np.load(WGPU_ARTIFACTS / "mlp_dyn.npz")
    weights = [tvm.runtime.tensor(data[k], dev) for k in ("w1", "b1", "w2", "b2")]
    for n in (3, 50, 3):
        logits, hidden = vm["main"](tvm.runtime.tensor(data[f"x_n{n}"], dev), *weights)
        assert int(logits.device.dlpack_device_type()) == 15
        np.testing.assert_allclose(logits.numpy(), data[f"logits_n{n}"], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(hidden.numpy(), data[f"hidden_n{n}"], rtol=1e-4, atol=1e-4)
