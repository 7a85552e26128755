"""The SPIR-V fixtures give numpy-matching results, through both paths a TVM artifact uses:

* the host library (``tvm.runtime.load_module(<case>.so)``): tvm-ffi parses its
  ``__tvm_ffi__library_bin``, imports the ``vulkan`` module through our loader, and the host code
  calls ``__tvm_set_device(7, id)``, looks kernels up in its imports and calls them with packed
  ``[buffers..., scalars..., launch dims...]`` (workspaces through TVMBackendAllocWorkspace);
* the device module alone (``ffi.Module.load_from_bytes.vulkan(payload)``), called with the same
  packed arguments by hand, including buffer handles taken from ``Tensor.data_ptr()``.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from backend_testing.runners import check_outputs, run_in_threads
from vk_support import (
    VK_ARTIFACTS,
    kernels_of,
    load_payload,
    missing_features,
    payload_of,
    target_property,
    vk_case,
    vk_cases,
    vulkan_device,
    vulkan_payload,
)

import tvm
from conftest import run_kernel_call

CASES = vk_cases()


@pytest.fixture(scope="module")
def dev():
    return vulkan_device(tvm)


@pytest.mark.parametrize("case_", CASES, ids=[c["name"] for c in CASES])
def test_artifact_matches_numpy(case_, dev):
    lacking = missing_features(case_, dev)
    if lacking:
        pytest.skip(f"{dev.device_name} lacks {lacking}")
    for call in case_["calls"]:
        check_outputs(case_, run_kernel_call(tvm, case_, call, dev))


def test_required_cases_are_present():
    names = {c["name"] for c in CASES}
    assert {"add", "add_fp16", "matmul", "row_sum", "dyn_muladd", "workspace", "multi_out"} <= names
    assert {"scalars", "scalars_ubo", "many_scalars", "misc", "tiny_add", "bench"} <= names
    assert vk_case("scalars_ubo")["device_kernels"][0]["flag"] == 1
    assert vk_case("many_scalars")["device_kernels"][0]["flag"] == 1
    assert vk_case("scalars")["device_kernels"][0]["flag"] == 0


def test_artifacts_embed_the_committed_payloads():
    for c in CASES:
        assert payload_of(c["name"]) in (VK_ARTIFACTS / f"{c['name']}.so").read_bytes()


def test_artifact_module_tree(dev):
    mod = tvm.runtime.load_module(str(VK_ARTIFACTS / "workspace.so"))
    (vk,) = mod.imports
    assert vk.kind == "vulkan"
    assert vk.implements_function("workspace_kernel")
    assert vk.implements_function("workspace_kernel_1")
    assert not vk.implements_function("workspace")
    src = vk.inspect_source()
    assert "// Function: workspace_kernel\n" in src and "workgroup size (64, 1, 1)" in src


def test_artifact_argument_checks(dev):
    mod = tvm.runtime.load_module(str(VK_ARTIFACTS / "add.so"))
    a = tvm.runtime.empty((1024,), "float32", dev)
    with pytest.raises(TypeError, match="expected 3 arguments"):
        mod["add"](a, a)
    with pytest.raises(ValueError, match="must be a 1-d float32 tensor on vulkan"):
        mod["add"](a, a, tvm.runtime.empty((1024,), "float32", tvm.cpu(0)))


# ---------------------------------------------------------------------- the device module alone


def test_elementwise_through_raw_module(dev):
    mod = load_payload(payload_of("add"))
    assert mod.kind == "vulkan"
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1024).astype("float32"), rng.standard_normal(1024).astype("float32")
    a, b = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)
    c = tvm.runtime.empty((1024,), "float32", dev)
    # data_ptr() is the BufferDescriptor* that compiled host code forwards as an opaque pointer.
    mod["add_kernel"](*[ctypes.c_void_p(t.data_ptr()) for t in (a, b, c)], 16, 64)
    np.testing.assert_array_equal(c.numpy(), x + y)
    # DLTensor / Tensor arguments carry the same handle.
    c2 = tvm.runtime.empty((1024,), "float32", dev)
    mod["add_kernel"](a, b, c2, 16, 64)
    np.testing.assert_array_equal(c2.numpy(), x + y)


def test_matmul_with_shared_memory(dev):
    mod = load_payload(payload_of("matmul"))
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((64, 32)).astype("float32"), rng.standard_normal((32, 48)).astype("float32")
    a, b = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)
    c = tvm.runtime.empty((64, 48), "float32", dev)
    # tags blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x
    mod["matmul_kernel"](a, b, c, 4, 3, 16, 16)
    np.testing.assert_allclose(c.numpy(), x @ y, rtol=1e-4, atol=1e-4)


def test_reduction(dev):
    mod = load_payload(payload_of("row_sum"))
    x = np.random.default_rng(2).standard_normal((64, 256)).astype("float32")
    b = tvm.runtime.empty((64,), "float32", dev)
    mod["row_sum_kernel"](tvm.runtime.tensor(x, dev), b, 64, 64)
    np.testing.assert_allclose(b.numpy(), x.sum(axis=1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["scalars", "scalars_ubo"])
def test_scalar_widths_push_constants_and_ubo(dev, name):
    mod = load_payload(payload_of(name))
    oi = tvm.runtime.empty((3,), "int64", dev)
    of = tvm.runtime.empty((2,), "float64", dev)
    mod[f"{name}_kernel"](oi, of, -5, 2**40 + 3, 2**32 - 1, 1.5, 1e300, 1)
    assert oi.numpy().tolist() == [-5, 2**40 + 3, 2**32 - 1]
    assert of.numpy().tolist() == [1.5, 1e300]
    # Different values on the next launch: scalars are captured per launch, not per module.
    mod[f"{name}_kernel"](oi, of, 7, -(2**50), 0, -0.25, -2.5, 1)
    assert oi.numpy().tolist() == [7, -(2**50), 0]
    assert of.numpy().tolist() == [-0.25, -2.5]


def test_ubo_scalars_of_queued_launches_do_not_alias(dev):
    # Many UBO launches recorded into one batch: each must see its own scalars.
    mod = load_payload(payload_of("many_scalars"))
    outs = [tvm.runtime.empty((20,), "float32", dev) for _ in range(40)]
    for i, out in enumerate(outs):
        mod["many_scalars_kernel"](out, *[float(i + k) for k in range(20)], 1)
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(out.numpy(), [(i + k) * (k + 1) for k in range(20)])


def test_fp16(dev):
    if not all(target_property(dev, k) for k in ("supports_float16", "supports_16bit_buffer")):
        pytest.skip(f"{dev.device_name} has no float16 support")
    mod = load_payload(payload_of("add_fp16"))
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(1024).astype("float16"), rng.standard_normal(1024).astype("float16")
    c = tvm.runtime.empty((1024,), "float16", dev)
    mod["add_fp16_kernel"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), c, 16, 64)
    np.testing.assert_allclose(c.numpy().astype("float32"), (x + y).astype("float32"), rtol=1e-3)


def test_3d_grid_dyn_shared_memory_tag_and_null_buffer(dev):
    mod = load_payload(payload_of("misc"))
    out = tvm.runtime.empty((2, 10, 12), "int32", dev)
    mod["grid3d_kernel"](out, 3, 2, 2, 4, 5, 1, 1024)  # the dynamic shared memory size is consumed
    z, y, x = np.meshgrid(np.arange(2), np.arange(10), np.arange(12), indexing="ij")
    np.testing.assert_array_equal(out.numpy(), x * 10000 + y * 100 + z)
    flag = tvm.runtime.empty((1,), "int32", dev)
    mod["null_arg_kernel"](flag, None, 1)
    assert flag.numpy().tolist() == [7]


def test_kernel_sequence_is_batched_and_ordered(dev):
    # A chain of dependent launches with no sync in between: every launch must see the previous
    # one's writes (barriers), and nothing reaches the host before the final copy.
    mod = load_payload(payload_of("dyn_muladd"))
    n = 1000
    x = np.full(n, 1.0, dtype="float32")
    ones = tvm.runtime.tensor(x, dev)
    bufs = [tvm.runtime.tensor(x, dev), tvm.runtime.empty((n,), "float32", dev)]
    for i in range(2000):  # crosses the per-batch command limit twice
        mod["dyn_muladd_kernel"](bufs[i % 2], ones, bufs[(i + 1) % 2], n, (n + 63) // 64, 64)
    np.testing.assert_array_equal(bufs[0].numpy(), np.full(n, 2001.0, dtype="float32"))


def test_module_is_shared_between_threads(dev):
    mod = load_payload(payload_of("add"))
    f = mod["add_kernel"]

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            x, y = (
                rng.standard_normal(1024).astype("float32"),
                rng.standard_normal(1024).astype("float32"),
            )
            c = tvm.runtime.empty((1024,), "float32", dev)
            f(tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), c, 16, 64)
            np.testing.assert_array_equal(c.numpy(), x + y)

    errors = run_in_threads(worker)
    assert not errors, errors


def test_payload_round_trip(dev):
    payload = payload_of("workspace")
    fmt, kernels = vulkan_payload.read_payload(payload)
    assert fmt == "vulkan" and [k.name for k in kernels] == ["workspace_kernel", "workspace_kernel_1"]
    assert len(kernels_of("bench")) == 3
