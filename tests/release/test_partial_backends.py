"""An artifact that needs more backends than are installed (issue 9, item 6).

tests/artifacts/multitarget/mixed.so is ONE library apache-tvm 0.27 compiled from one IRModule
whose functions carry different targets: ``add_one_cpu`` (llvm), ``scale_opencl`` (OpenCL) and
``square_cuda`` (CUDA).  With only some backends installed it must load, the functions whose
backends are present must compute the right values, and a function whose backend is missing must
fail when it is called (not at load), naming the wheel to install.  Tensors for a device with no
backend come from "another framework" through DLPack (probe.ForeignTensor).
"""

from __future__ import annotations

import json

import pytest
import release_support as rs

from conftest import ARTIFACTS

MANIFEST = json.loads((ARTIFACTS / "multitarget" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def train(tmp_path_factory: pytest.TempPathFactory) -> rs.Train:
    return rs.train(tmp_path_factory)


def test_fixture_is_one_library_with_three_targets():
    assert MANIFEST["device_modules"] == ["cuda", "opencl"]
    assert {f["target"] for f in MANIFEST["functions"]} == {"llvm", "opencl", "cuda"}
    assert (ARTIFACTS / "multitarget" / MANIFEST["file"]).stat().st_size > 0


def assert_missing(result: str, dist: str) -> None:
    assert result.startswith("error: RuntimeError"), result
    assert f"pip install {dist}" in result, result


def assert_modules_answer_own_kernels(results: dict[str, str]) -> None:
    for kind, kernels in MANIFEST["kernels"].items():
        assert results[f"owns:{kind}"] == ",".join(kernels), results


def test_without_cuda_wheel(tmp_path_factory, train):
    env = rs.new_env(tmp_path_factory, "partial-no-cuda")
    env.install(train.wheel(rs.CORE), train.wheel(f"{rs.CORE}-opencl"))
    report = env.probe("run:opencl", "mixed")
    rs.require_ran(report, "run:opencl")  # skips on a machine without an OpenCL driver
    results = report["results"]
    assert results["mixed:load"] == "ok", results
    assert results["mixed:add_one_cpu"] == "ok", results
    assert results["mixed:scale_opencl"] == "ok", results
    assert_missing(results["mixed:square_cuda"], "tvm-runtime-cuda")
    assert_modules_answer_own_kernels(results)
    (cuda_kernel,) = MANIFEST["kernels"]["cuda"]
    assert_missing(results[f"kernel:{cuda_kernel}"], "tvm-runtime-cuda")


def test_without_opencl_wheel(tmp_path_factory, train):
    env = rs.new_env(tmp_path_factory, "partial-no-opencl")
    env.install(train.wheel(rs.CORE), train.wheel(f"{rs.CORE}-vulkan"))
    report = env.probe("mixed")
    results = report["results"]
    assert results["mixed:load"] == "ok", results
    assert results["mixed:add_one_cpu"] == "ok", results
    assert_missing(results["mixed:scale_opencl"], "tvm-runtime-opencl")
    assert_missing(results["mixed:square_cuda"], "tvm-runtime-cuda")
    assert_modules_answer_own_kernels(results)
    for kind in ("opencl", "cuda"):
        (kernel,) = MANIFEST["kernels"][kind]
        assert_missing(results[f"kernel:{kernel}"], f"tvm-runtime-{kind}")


def test_core_only_still_runs_the_cpu_function(tmp_path_factory, train):
    env = rs.new_env(tmp_path_factory, "partial-core-only")
    env.install(train.wheel(rs.CORE))
    results = env.probe("mixed")["results"]
    assert results["mixed:load"] == "ok", results
    assert results["mixed:add_one_cpu"] == "ok", results
    assert_missing(results["mixed:scale_opencl"], "tvm-runtime-opencl")
    assert_missing(results["mixed:square_cuda"], "tvm-runtime-cuda")
