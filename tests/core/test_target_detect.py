"""``tvm.target.detect_target`` (apache-tvm 0.27's API): one registry of device target detectors,
filled by the loader from our hooks' declarations and by plugins, for every device this machine has:
the CPU, OpenCL (PoCL), Vulkan (lavapipe) and CUDA (a clear error without a GPU)."""

from __future__ import annotations

import json

import pytest
from backend_testing.devices import device_or_skip

import tvm
from conftest import run_python
from tvm.target.detect_target import (
    SUPPORT_DEVICE,
    SUPPORTED_DEVICE,
    detect_target_from_device,
    register_device_target_detector,
)


def _hook(name: str):
    """The installed hook of backend ``name``; every backend wheel is installed where tests run."""
    from tvm.backend import loader

    loader.load(name)
    return __import__(f"tvm.backend.{name}", fromlist=["detect_target"])


def test_cpu_is_built_in():
    for dev in ("cpu", "cpu:0", tvm.cpu(0)):
        target = detect_target_from_device(dev)
        assert target["kind"] == "llvm" and target["mtriple"].endswith("-linux-gnu")
        assert target["num-cores"] >= 1
    assert SUPPORT_DEVICE is SUPPORTED_DEVICE  # apache-tvm's older name


def test_opencl_pocl():
    dev = device_or_skip(tvm, tvm.opencl(0), tvm.backend.hook_api.DeviceType.kDLOpenCL, "OpenCL")
    hook = _hook("opencl")
    target = detect_target_from_device(dev)
    assert target == detect_target_from_device("opencl") == hook.detect_target(dev)
    assert target["kind"] == "opencl"
    assert target["max_num_threads"] == dev.max_threads_per_block > 0
    assert target["thread_warp_size"] == dev.warp_size
    assert SUPPORTED_DEVICE["opencl"] is hook.detect_target  # declared in hook.BACKEND


def test_vulkan_lavapipe():
    dev = device_or_skip(tvm, tvm.vulkan(0), tvm.backend.hook_api.DeviceType.kDLVulkan, "Vulkan")
    hook = _hook("vulkan")
    target = detect_target_from_device("vulkan:0")
    assert target == hook.detect_target(dev)
    assert target["kind"] == "vulkan" and target["device_name"] == dev.device_name
    assert target["max_num_threads"] > 0 and isinstance(target["supports_float32"], bool)
    assert tvm.backend.detect_target_from_device(dev) == target  # the same registry


def test_cuda_detects_or_says_why():
    hook = _hook("cuda")
    assert SUPPORTED_DEVICE["cuda"] is hook.detect_target
    dev = tvm.cuda(0)
    if dev.exist:
        target = detect_target_from_device(dev)
        assert target["kind"] == "cuda" and target["arch"].startswith("sm_")
        return
    with pytest.raises(ValueError) as err:
        detect_target_from_device("cuda")
    message = str(err.value)
    assert "cuda:0" in message and hook.driver_status() in message  # what is missing, and the fix


def test_device_index_that_does_not_exist():
    device_or_skip(tvm, tvm.opencl(0), tvm.backend.hook_api.DeviceType.kDLOpenCL, "OpenCL")
    with pytest.raises(ValueError, match="no opencl device with index 63"):
        detect_target_from_device(tvm.opencl(63))


def test_kind_without_backend_names_the_wheel_or_says_none_serves_it():
    proc = run_python(
        """
        import json, tvm
        from tvm.target.detect_target import detect_target_from_device
        out = {}
        for dev in ("opencl", "metal", "hexagon"):
            try:
                detect_target_from_device(dev)
            except ValueError as err:
                out[dev] = str(err)
        print(json.dumps(out))
        """,
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    out = json.loads(proc.stdout)
    assert "pip install tvm-runtime-opencl" in out["opencl"]
    assert "no target detector for device kind `metal`" in out["metal"]
    assert "pip install tvm-runtime-metal" in out["metal"]
    assert "no target detector for device kind `hexagon`" in out["hexagon"]
    assert "no installed backend serves it" in out["hexagon"] and "cpu" in out["hexagon"]


def test_register_validates_and_last_registration_wins():
    with pytest.raises(TypeError, match="must be callable"):
        register_device_target_detector("cpu", "not a function")
    with pytest.raises(ValueError, match="unknown device kind 'gpu'"):
        register_device_target_detector("gpu", lambda dev: {})
    original = SUPPORTED_DEVICE["cpu"]
    try:
        # A DLDeviceType works as a key as well as apache-tvm's kind names.
        register_device_target_detector(tvm.backend.hook_api.DeviceType.kDLCPU, lambda dev: {"kind": "c"})
        assert detect_target_from_device(tvm.cpu(0)) == {"kind": "c"}
    finally:
        register_device_target_detector("cpu", original)
    assert detect_target_from_device("cpu")["kind"] == "llvm"


def test_hook_of_our_protocol_with_only_detect_target(testdev_install):
    """A hook that defines detect_target() but never calls the registry gets it registered."""
    proc = run_python(
        """
        import tvm
        from tvm.target.detect_target import SUPPORTED_DEVICE, detect_target_from_device
        from tvm.backend import testdev
        assert SUPPORTED_DEVICE["ext_dev"] is testdev.detect_target
        print(detect_target_from_device("ext_dev:1")["kind"])
        """,
        env={"PYTHONPATH": str(testdev_install("normal"))},
    )
    assert proc.stdout.strip() == "testdev"


def test_import_tvm_does_not_import_tvm_target():
    """apache-tvm installed over tvm-runtime replaces tvm/target/: loading backends must not
    need it, so ``import tvm`` never imports that package (only detection through it does)."""
    proc = run_python(
        """
        import sys, tvm
        print("tvm.target" in sys.modules)
        """
    )
    assert proc.stdout.strip() == "False"


def test_target_package_says_there_is_no_compiler():
    proc = run_python(
        """
        import tvm.target
        from tvm.target import detect_target  # the submodule still imports by name
        assert callable(detect_target.detect_target_from_device)
        try:
            tvm.target.Target
        except AttributeError as err:
            print(err)
        """
    )
    assert "'Target'" in proc.stdout and "no compiler" in proc.stdout and "apache-tvm" in proc.stdout
