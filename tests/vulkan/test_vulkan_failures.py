"""Failure paths: no Vulkan loader, no driver (ICD), corrupted module blobs, invalid SPIR-V, a
missing entry point, kernels the device cannot run, bad calls.  Each must be a clear Python
exception (or Device.exist == False), never a crash; with the Khronos validation layer installed
the whole fixture suite must run without a single validation message."""

from __future__ import annotations

import ctypes
import struct

import numpy as np
import pytest
from backend_testing.no_driver import (
    driver_status,
    no_driver_script,
    run_without_driver,
)
from backend_testing.payloads import assert_loaded_add_kernel, assert_truncations_rejected, copy_with_length
from vk_support import (
    VK_ARTIFACTS,
    kernels_of,
    load_kernels,
    load_payload,
    payload_of,
    vulkan_device,
    vulkan_payload,
)

import tvm
from conftest import run_module, run_python

ADD_SO = str(VK_ARTIFACTS / "add.so")
LVP_MISSING = {"VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent/icd.json"}

# What a process without a usable Vulkan must survive: import, attributes, the diagnostics,
# loading an artifact (lazy) and then using the device, which must raise with the reason.
NO_VULKAN_SCRIPT = no_driver_script("vulkan", ADD_SO, ("empty", "detect", "call", "sync"))


def run_without_vulkan(env):
    return run_without_driver(NO_VULKAN_SCRIPT, env)


def test_no_driver():
    out = run_without_vulkan(LVP_MISSING)
    status = driver_status(out)
    if "could not be opened" in status:
        pytest.skip("no Vulkan loader installed: the no-driver case cannot be shown")
    assert "no Vulkan driver (ICD) was found" in status
    assert "/nonexistent/icd.json" in status
    assert "mesa-vulkan-drivers" in status


# ------------------------------------------------------------------------ corrupted blobs


def test_real_payload_loads():
    assert_loaded_add_kernel(load_payload(payload_of("add")), "vulkan")


def test_truncated_payload():
    assert_truncations_rejected(load_payload, payload_of("add"), "Corrupted vulkan")


def test_huge_length_fields():
    payload = bytearray(payload_of("add"))
    # The fmt string's length, then the SPIR-V word count inside the shader.
    struct.pack_into("<Q", payload, 0, 1 << 62)
    with pytest.raises(ValueError, match="exceeds the remaining"):
        load_payload(bytes(payload))
    (k,) = kernels_of("add")
    shader = struct.pack("<IQ", 0, 1 << 40) + struct.pack(f"<{len(k.words)}I", *k.words)
    with pytest.raises(ValueError, match="Corrupted vulkan .*shader of kernel 'add_kernel'"):
        load_kernels([k], shaders={"add_kernel": shader})


def test_corrupted_artifact_file(tmp_path):
    # Patch a length inside a copy of the artifact's embedded payload: loading fails cleanly.
    at = open(ADD_SO, "rb").read().index(payload_of("add"))
    bad = copy_with_length(ADD_SO, tmp_path, at, lambda n: 1000)  # the fmt string's length
    with pytest.raises(ValueError, match="Corrupted vulkan module blob"):
        tvm.runtime.load_module(bad)


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown Vulkan module format 'spirv'"):
        load_kernels(kernels_of("add"), fmt="spirv")


def test_kernel_without_shader():
    (k,) = kernels_of("add")
    shaders = {"other_kernel": vulkan_payload.shader_bytes(0, k.words)}
    with pytest.raises(ValueError, match="kernel 'add_kernel' of the function table has no SPIR-V shader"):
        load_kernels([k], shaders=shaders)


# ------------------------------------------------------------------------ invalid SPIR-V


def with_words(name, words):
    (k,) = kernels_of(name)
    k.words = words
    return k


def cut_inside_last_long_instruction(words):
    i, last = 5, None
    while i < len(words):
        if words[i] >> 16 >= 3:
            last = i
        i += words[i] >> 16
    return words[: last + 2]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda w: [0xDEADBEEF] + w[1:], "bad magic number 0xdeadbeef"),
        (lambda w: w[:3], "shorter than the 5-word header"),
        (cut_inside_last_long_instruction, "runs past the end of the module"),
        (lambda w: w[:5] + [0] + w[6:], "word count of 0"),
        (lambda w: w[:1] + [0x00990000] + w[2:], "unknown SPIR-V version"),
        (lambda w: [], "shorter than the 5-word header"),
    ],
    ids=["magic", "header", "truncated", "zero-count", "version", "empty"],
)
def test_invalid_spirv(mutate, message):
    (k,) = kernels_of("add")
    with pytest.raises(ValueError, match=f"invalid SPIR-V for kernel 'add_kernel': .*{message}"):
        load_kernels([with_words("add", mutate(list(k.words)))])


def test_missing_entry_point():
    (k,) = kernels_of("add")
    k.words = vulkan_payload.rename_entry_point(k.words, "add_kernel", "main")
    with pytest.raises(
        ValueError, match="no GLCompute entry point named 'add_kernel' \\(entry points: 'main'\\)"
    ):
        load_kernels([k])


def test_entry_point_name_is_not_terminated():
    (k,) = kernels_of("add")
    words = list(k.words)
    i = 5
    while words[i] & 0xFFFF != 15:  # OpEntryPoint
        i += words[i] >> 16
    count = words[i] >> 16
    for j in range(i + 3, i + count):
        words[j] = 0x41414141  # "AAAA" over the name and the interface ids: no NUL
    k.words = words
    with pytest.raises(ValueError, match="not NUL-terminated"):
        load_kernels([k])


# ------------------------------------------------------------------------ device-time failures


@pytest.fixture()
def dev():
    return vulkan_device(tvm)


def insert_capability(words, capability):
    words = list(words)
    i = 5
    while words[i] & 0xFFFF != 17:  # OpCapability
        i += words[i] >> 16
    return words[:i] + [(2 << 16) | 17, capability] + words[i:]


def test_shader_the_driver_rejects(dev):
    # Structurally fine, but declares a capability no Vulkan driver knows: the pipeline build
    # fails with the driver's error, the other kernel of the module keeps working.
    (k,) = kernels_of("tiny_add")
    k.words = insert_capability(k.words, 99999)
    (good,) = kernels_of("add")
    mod = load_kernels([k, good])
    x = tvm.runtime.tensor(np.ones(1024, dtype="float32"), dev)
    for _ in range(2):  # reported again, not cached as a crash
        with pytest.raises(RuntimeError, match="building Vulkan kernel 'tiny_add_kernel'"):
            mod["tiny_add_kernel"](x, x, x, 1, 4)
    c = tvm.runtime.empty((1024,), "float32", dev)
    mod["add_kernel"](x, x, c, 16, 64)
    np.testing.assert_array_equal(c.numpy(), np.full(1024, 2.0, dtype="float32"))


def test_workgroup_larger_than_device_allows(dev):
    (k,) = kernels_of("add")
    words = list(k.words)
    i = 5
    while not (words[i] & 0xFFFF == 16 and words[i + 2] == 17):  # OpExecutionMode LocalSize
        i += words[i] >> 16
    words[i + 3] = dev.max_threads_per_block * 2
    k.words = words
    mod = load_kernels([k])
    x = tvm.runtime.empty((1024,), "float32", dev)
    with pytest.raises(RuntimeError, match="workgroup size .* exceeds the device limits"):
        mod["add_kernel"](x, x, x, 1, 64)


def test_call_checks(dev):
    mod = load_payload(payload_of("dyn_muladd"))
    x = tvm.runtime.empty((64,), "float32", dev)
    with pytest.raises(TypeError, match="expects 6 packed arguments"):
        mod["dyn_muladd_kernel"](x, x, x, 64)
    with pytest.raises(TypeError, match="integer"):
        mod["dyn_muladd_kernel"](x, x, x, "sixty-four", 1, 64)
    with pytest.raises(TypeError, match="buffer handle"):
        mod["dyn_muladd_kernel"](x, 3, x, 64, 1, 64)
    with pytest.raises(ValueError, match="grid dimension 0 is"):
        mod["dyn_muladd_kernel"](x, x, x, 64, 1 << 40, 64)
    with pytest.raises(ValueError, match="does not exist"):
        tvm.get_global_func("__tvm_set_device")(7, 63)


def test_buffer_larger_than_the_storage_buffer_range(dev):
    limit = tvm.backend.vulkan.get_target_property(dev, "max_storage_buffer_range")
    if limit >= 1 << 31:
        pytest.skip(f"maxStorageBufferRange is {limit}: too large to exceed in a test")
    mod = load_payload(payload_of("dyn_muladd"))
    x = tvm.runtime.empty((64,), "float32", dev)
    huge = tvm.runtime.empty((limit // 4 + 16,), "float32", dev)
    with pytest.raises(ValueError, match="argument 2 has .* bytes, more than the device's maxStorageBuffer"):
        mod["dyn_muladd_kernel"](x, x, huge, 64, 1, 64)


def test_signature_checks():
    (k,) = kernels_of("dyn_muladd")
    k.arg_types = [k.arg_types[0], k.arg_types[3], k.arg_types[1], k.arg_types[2]]
    mod = load_kernels([k])
    with pytest.raises(ValueError, match="buffer argument 2 follows a scalar"):
        mod["dyn_muladd_kernel"]
    (k,) = kernels_of("add")
    k.tags = ["warpIdx.w"]
    with pytest.raises(ValueError, match="unknown launch tag 'warpIdx.w'"):
        load_kernels([k])["add_kernel"]


def test_buffer_from_another_device(dev):
    # Compiled host code checks device types before launching; a direct call must not crash.
    mod = load_payload(payload_of("add"))
    cpu = tvm.runtime.empty((1024,), "float32", tvm.cpu(0))
    gpu = tvm.runtime.empty((1024,), "float32", dev)
    with pytest.raises(TypeError, match="argument 1 is a tensor on device type 1"):
        mod["add_kernel"](gpu, cpu, gpu, 16, 64)
    with pytest.raises(ValueError, match="argument 0 is not a Vulkan buffer"):
        mod["add_kernel"](ctypes.c_void_p(cpu.data_ptr()), gpu, gpu, 16, 64)


@pytest.mark.parametrize(
    "extra",
    [{}, {"TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR": "1", "TVM_VULKAN_FORCE_STAGING": "1"}],
    ids=["default", "fallback-paths"],
)
def test_validation_layer_is_clean(dev, extra):
    probe = run_python(
        "import tvm; tvm.vulkan(0).exist\nfrom tvm.backend.vulkan import validation_messages\n"
        "print(tvm.get_global_func('tvm_runtime.vulkan.validation_enabled')(), validation_messages())",
        env={"TVM_VULKAN_VALIDATION": "1"},
    )
    if not probe.stdout.startswith("True"):
        pytest.skip(f"Khronos validation layer not installed: {probe.stdout.strip()}")
    proc = run_module("children.vulkan_every_case", "validation", env={"TVM_VULKAN_VALIDATION": "1", **extra})
    assert "MESSAGES: 0" in proc.stdout, proc.stdout + proc.stderr


def test_validation_layer_reports_misuse(dev):
    # The messages reach Python: a shader declaring a capability without enabling its feature.
    probe = run_python(
        "import tvm; tvm.vulkan(0).exist\n"
        "print(tvm.get_global_func('tvm_runtime.vulkan.validation_enabled')())",
        env={"TVM_VULKAN_VALIDATION": "1"},
    )
    if not probe.stdout.startswith("True"):
        pytest.skip("Khronos validation layer not installed")
    tests_dir = VK_ARTIFACTS.parent.parent
    proc = run_python(
        f"import sys; sys.path[:0] = [{str(tests_dir / 'vulkan')!r}, {str(tests_dir)!r}]\n"
        + """
import numpy as np, tvm
from vk_support import kernels_of, load_kernels
from test_vulkan_failures import insert_capability
from tvm.backend.vulkan import validation_messages
(k,) = kernels_of("tiny_add")
k.words = insert_capability(k.words, 4427)  # DrawParameters: a graphics-only capability
dev = tvm.vulkan(0)
x = tvm.runtime.tensor(np.ones(4, dtype="float32"), dev)
try:
    load_kernels([k])["tiny_add_kernel"](x, x, x, 1, 4)
    dev.sync()
except RuntimeError:
    pass
print("MESSAGES:", validation_messages())
""",
        env={"TVM_VULKAN_VALIDATION": "1"},
    )
    assert "VUID-VkShaderModuleCreateInfo-pCode" in proc.stdout, proc.stdout + proc.stderr
