"""Vendor libraries that are missing, misconfigured or fail at initialisation.

Each fault: the device reports ``exist == False`` with a status that says what is wrong and what
to do, using it raises that reason as a Python exception, a tensor allocated before the first
use of the broken device keeps its values, and the CPU and every healthy backend still run a
real artifact.  (Missing ICD loader / Vulkan loader / CUDA driver, libraries that are not
loaders, cuInit failures and zero devices are covered per backend in tests/opencl, tests/vulkan
and tests/cuda; these tests add the broken-driver configurations and the "rest keeps working"
half.)
"""

from __future__ import annotations

import json

import fakes
import pytest
from fault_support import probe

import tvm

OPENCL, VULKAN, CUDA = 4, 7, 2

# Breaks `kind`, then reports what the broken device says and which healthy devices still run.
BROKEN_DEVICE = """
before = tvm.runtime.tensor(np.arange(16, dtype="float32"), tvm.cpu(0))
dev = tvm.device({kind!r}, 0)
exist = dev.exist
status = STATUS({device_type})
use = error_of(lambda: tvm.runtime.empty((4,), "float32", dev))
call = error_of(lambda: run_add({kind!r}))
healthy = {{k: run_add(k) for k in ["cpu", "opencl", "vulkan"] if k != {kind!r} and tvm.device(k, 0).exist}}
result(exist=exist, status=status, use=use, call=call, healthy=healthy,
       before=before.numpy().tolist() == list(range(16)), warnings=IMPORT_WARNINGS)
"""


def broken(kind: str, device_type: int, env: dict[str, str]) -> dict:
    r = probe(BROKEN_DEVICE.format(kind=kind, device_type=device_type), env=env)
    assert r["exist"] is False, r
    assert r["before"] is True, "a tensor allocated before the fault lost its values"
    assert r["warnings"] == [], "a driver fault must not turn into an import-time warning"
    # The device's status is the error of every use, and the call of a real artifact.
    assert r["use"] is not None and r["use"].startswith("RuntimeError"), r["use"]
    assert r["call"] is not None and r["call"].startswith(("RuntimeError", "ValueError")), r["call"]
    expected_healthy = {k for k in ("cpu", "opencl", "vulkan") if k != kind and tvm.device(k, 0).exist}
    assert set(r["healthy"]) == expected_healthy and all(r["healthy"].values()), r["healthy"]
    return r


@pytest.fixture(scope="module")
def fake_opencl(tmp_path_factory):
    return str(fakes.build("opencl"))


# ------------------------------------------------------------------------------------ OpenCL


def test_opencl_vendors_dir_is_empty(tmp_path):
    r = broken("opencl", OPENCL, {"OCL_ICD_VENDORS": str(tmp_path)})
    if "no OpenCL ICD loader" in r["status"]:
        pytest.skip("no ICD loader installed: the no-platform case cannot be shown")
    assert "found no platform" in r["status"] and f"OCL_ICD_VENDORS={tmp_path}" in r["status"]
    assert "apt-get install pocl-opencl-icd" in r["status"]
    assert "found no platform" in r["use"]


@pytest.mark.parametrize("driver", ["missing", "fails_init"])
def test_opencl_icd_whose_driver_is_broken(tmp_path, fake_opencl, driver):
    # An .icd file names the vendor driver; ocl-icd skips one it cannot open or whose
    # clIcdGetPlatformIDsKHR fails, which leaves the loader without a platform.
    library = "/nonexistent/libfakecl.so" if driver == "missing" else fake_opencl
    (tmp_path / "broken.icd").write_text(library + "\n")
    r = broken("opencl", OPENCL, {"OCL_ICD_VENDORS": str(tmp_path), "FAKE_CL_ERROR": "-6"})
    if "no OpenCL ICD loader" in r["status"]:
        pytest.skip("no ICD loader installed: the broken-ICD case cannot be shown")
    assert "found no platform" in r["status"]


@pytest.mark.parametrize(
    "fail, expected",
    [
        (
            "clGetPlatformIDs",
            "initialization failed: OpenCL error CL_OUT_OF_HOST_MEMORY (-6) in clGetPlatformIDs",
        ),
        ("clGetDeviceIDs", "found 1 platform(s) but no usable device"),
        ("clCreateContext", "platform 'Fake OpenCL': clCreateContext failed (CL_OUT_OF_HOST_MEMORY (-6))"),
        ("clCreateCommandQueue", "device 'Fake OpenCL Device': clCreateCommandQueue failed"),
    ],
)
def test_opencl_driver_that_fails_at_init(fake_opencl, fail, expected):
    r = broken("opencl", OPENCL, {"TVM_OPENCL_LIBRARY": fake_opencl, "FAKE_CL_FAIL": fail})
    assert expected in r["status"], r["status"]
    assert expected in r["use"]


# ------------------------------------------------------------------------------------ Vulkan


def vulkan_env(icd: str) -> dict[str, str]:
    return {"VK_ICD_FILENAMES": icd, "VK_DRIVER_FILES": icd}


def icd_json(library: str) -> str:
    return json.dumps(
        {"file_format_version": "1.0.0", "ICD": {"library_path": library, "api_version": "1.3.0"}}
    )


@pytest.mark.parametrize(
    "content, expected",
    [
        # The Khronos loader reports a manifest it cannot parse as VK_ERROR_OUT_OF_HOST_MEMORY.
        pytest.param("{ this is not json", "malformed ICD JSON file", id="malformed-json"),
        pytest.param(
            icd_json("/nonexistent/libvulkan_fake.so"),
            "no Vulkan driver (ICD) was found",
            id="library-missing",
        ),
        pytest.param(icd_json("libm.so.6"), "no Vulkan driver (ICD) was found", id="library-not-an-icd"),
    ],
)
def test_vulkan_icd_that_is_broken(tmp_path, content, expected):
    icd = tmp_path / "broken_icd.json"
    icd.write_text(content)
    r = broken("vulkan", VULKAN, vulkan_env(str(icd)))
    if "could not be opened" in r["status"]:
        pytest.skip("no Vulkan loader installed: the broken-ICD case cannot be shown")
    assert expected in r["status"], r["status"]
    assert f"VK_DRIVER_FILES={icd}" in r["status"]
    assert expected in r["use"]


# ------------------------------------------------------------------------------ all at once


def test_every_vendor_broken_at_once(tmp_path, fake_opencl):
    """No usable driver anywhere: the CPU runtime works as if no backend were installed."""
    cuda_driver = str(fakes.build("cuda"))
    env = {
        "TVM_OPENCL_LIBRARY": fake_opencl,
        "FAKE_CL_FAIL": "clGetPlatformIDs",
        **vulkan_env(str(tmp_path / "missing_icd.json")),
        "TVM_CUDA_DRIVER_LIBRARY": cuda_driver,
        "FAKE_CUDA_INIT_ERROR": "2",  # CUDA_ERROR_OUT_OF_MEMORY at init
    }
    r = probe(
        """
        before = tvm.runtime.tensor(np.arange(16, dtype="float32"), tvm.cpu(0))
        kinds = ["opencl", "vulkan", "cuda"]
        exist = {k: tvm.device(k, 0).exist for k in kinds}
        status = {k: STATUS(tvm.device(k, 0).dlpack_device_type()) for k in kinds}
        errors = {k: error_of(lambda k=k: run_add(k)) for k in kinds}
        import runpy, contextlib, io
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            try:
                runpy.run_module("tvm.backend", run_name="__main__")
            except SystemExit:
                pass
        result(exist=exist, status=status, errors=errors, cpu=run_add("cpu"),
               before=before.numpy().tolist() == list(range(16)), diagnostics=text.getvalue())
        """,
        env=env,
    )
    assert r["exist"] == {"opencl": False, "vulkan": False, "cuda": False}
    assert "clGetPlatformIDs" in r["status"]["opencl"]
    assert (
        "no Vulkan driver (ICD) was found" in r["status"]["vulkan"]
        or "could not be opened" in r["status"]["vulkan"]
    )
    assert "cuInit returned CUDA_ERROR_OUT_OF_MEMORY" in r["status"]["cuda"], r["status"]["cuda"]
    for kind, err in r["errors"].items():
        assert err is not None and err.startswith(("RuntimeError", "ValueError")), (kind, err)
    assert r["cpu"] is True and r["before"] is True
    for kind in ("opencl", "vulkan", "cuda"):
        assert r["status"][kind].splitlines()[0][:40] in r["diagnostics"], (kind, r["diagnostics"])
