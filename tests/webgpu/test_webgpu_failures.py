"""Failure paths: no wgpu-native library, a library of the wrong kind, corrupted payloads,
invalid WGSL, kernels that need a feature the adapter does not enable, bad calls.  Each is a
clear Python exception (or Device.exist == False), never a crash or a hang."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from backend_testing.no_driver import (
    driver_status,
    no_driver_script,
    run_without_driver,
)
from backend_testing.payloads import assert_loaded_add_kernel, assert_truncations_rejected, embedded_module
from webgpu_support import artifact, kernels_of, load_payload, webgpu_device, write_payload

import tvm
from conftest import run_python

ADD_SO = artifact("add")

NO_WEBGPU_SCRIPT = no_driver_script("webgpu", ADD_SO, ("empty", "detect", "call", "sync"))


@pytest.fixture(scope="module")
def dev():
    return webgpu_device(tvm)


def test_unknown_backend_override():
    out = run_without_driver(NO_WEBGPU_SCRIPT, {"TVM_WEBGPU_BACKEND": "glide"})
    assert "TVM_WEBGPU_BACKEND='glide' is not a WebGPU backend" in driver_status(out)


def test_adapter_filter_that_matches_nothing(dev):
    out = run_without_driver(NO_WEBGPU_SCRIPT, {"TVM_WEBGPU_ADAPTER": "no-such-adapter"})
    status = driver_status(out)
    assert "found no adapter" in status and "TVM_WEBGPU_ADAPTER='no-such-adapter'" in status


# ------------------------------------------------------------------------ corrupted payloads


def payload_of(name: str) -> bytes:
    return embedded_module(artifact(name), "webgpu").payload


def test_real_payload_round_trips():
    assert write_payload(kernels_of("multi_out")) == payload_of("multi_out")
    assert_loaded_add_kernel(load_payload(payload_of("add")), "webgpu")


def test_truncated_payload():
    assert_truncations_rejected(load_payload, payload_of("add"), "Corrupted webgpu")


def test_kernel_without_wgsl():
    (k,) = kernels_of("add")
    payload = write_payload([k])
    # drop the shader table: one kernel in fmap, none in smap
    cut = payload.rfind(b"\x01\x00\x00\x00\x00\x00\x00\x00" + len(k.name).to_bytes(8, "little"))
    broken = payload[:cut] + b"\x00" * 8
    with pytest.raises(ValueError, match="has no WGSL source"):
        load_payload(broken)


# ------------------------------------------------------------------ kernels that cannot run


def add_inputs(dev):
    return [tvm.runtime.tensor(np.ones(1024, "float32"), dev) for _ in range(3)]


def test_invalid_wgsl_names_the_kernel_and_the_compiler_message(dev):
    (k,) = kernels_of("add")
    broken = dataclasses.replace(k, wgsl=k.wgsl.replace("C_ptr[", "C_pttr[", 1))
    f = load_payload(write_payload([broken]))["add_kernel"]
    for _ in range(2):  # a failed build is not cached as a half-made pipeline
        with pytest.raises(ValueError, match=r"(?s)cannot compile kernel 'add_kernel'.*unknown identifier"):
            f(*add_inputs(dev), 16, 64)


def test_missing_write_access_tag(dev):
    (k,) = kernels_of("add")
    untagged = dataclasses.replace(k, tags=[t for t in k.tags if not t.startswith("paramWriteAccess")])
    with pytest.raises(ValueError, match="no paramWriteAccess launch tag"):
        load_payload(write_payload([untagged]))["add_kernel"]


def test_write_access_tag_of_the_wrong_length(dev):
    (k,) = kernels_of("add")
    tags = [t if not t.startswith("paramWriteAccess") else "paramWriteAccess:[0,1]" for t in k.tags]
    with pytest.raises(ValueError, match="3 buffer arguments but its paramWriteAccess tag lists 2"):
        load_payload(write_payload([dataclasses.replace(k, tags=tags)]))["add_kernel"]


def test_blockidx_z_is_reserved(dev):
    (k,) = kernels_of("add")
    tags = ["blockIdx.x", "threadIdx.x", "blockIdx.z", "paramWriteAccess:[0,0,1]"]
    f = load_payload(write_payload([dataclasses.replace(k, tags=tags)]))["add_kernel"]
    with pytest.raises(ValueError, match="reserve for wide grids"):
        f(*add_inputs(dev), 16, 64, 2)


def test_missing_feature_is_a_clear_error(dev):
    # An adapter without shader-f16, shown by not enabling the feature on this one.
    proc = run_python(
        f"""
        import numpy as np, tvm
        dev = tvm.webgpu(0)
        mod = tvm.runtime.load_module({artifact("add_fp16")!r})
        a = tvm.runtime.tensor(np.ones(1024, "float16"), dev)
        try:
            mod["add_fp16"](a, a, a)
        except RuntimeError as err:
            print("RAISED", err)
        """,
        env={"TVM_WEBGPU_DISABLE_FEATURES": "shader-f16"},
    )
    assert "RAISED" in proc.stdout, proc.stdout + proc.stderr
    assert "does not provide the 'shader-f16' feature" in proc.stdout
    assert "kernel 'add_fp16_kernel' uses float16" in proc.stdout


def test_wrong_argument_count(dev):
    mod = tvm.runtime.load_module(ADD_SO)
    a = tvm.runtime.empty((1024,), "float32", dev)
    with pytest.raises(TypeError):
        mod["add"](a, a)
    f = load_payload(payload_of("add"))["add_kernel"]
    with pytest.raises(TypeError, match="expects 5 packed arguments"):
        f(a, a, a, 16)


def test_null_buffer(dev):
    f = load_payload(payload_of("add"))["add_kernel"]
    a = tvm.runtime.empty((1024,), "float32", dev)
    with pytest.raises(TypeError, match="buffer argument 1 is NULL"):
        f(a, None, a, 16, 64)
