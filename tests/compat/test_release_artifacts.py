"""Artifacts of every apache-tvm release on PyPI (0.25.0.post1, 0.26.0, 0.27.0.post1; the same
kernels and Relax models, tests/artifacts/generate_releases.py) run on every device present:
numpy's results on the CPU, OpenCL (PoCL), WebGPU (lavapipe) and the fake Metal (CPU references of
the kernels); on the fake CUDA driver and the fake HIP, which run no kernel, each artifact loads, its
host code runs and launches every kernel of its module.

0.25's GPU host code looks kernels up through `__TVMBackendGetFuncFromEnv`, 0.26's and 0.27's
through `__TVMFFIEnvModLookupFromImports` + `__TVMFFIHandleInitOnce` (docs/compatibility.md).
"""

from __future__ import annotations

import json
import textwrap

import fakes
import pytest
from backend_testing.devices import device_or_skip
from compat_releases import MANIFESTS, RELEASES, VERSIONS, case_id, library, release_cases, run_case
from fakes import parse_log

import tvm
from conftest import REPO, child_result, run_python

DEVICES = {"cpu": (1, None), "opencl": (4, "OpenCL"), "webgpu": (15, "WebGPU")}


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    return tmp_path_factory.mktemp("release-libs")


def device(target: str):
    device_type, api = DEVICES[target]
    dev = tvm.device(device_type, 0)
    return dev if api is None else device_or_skip(tvm, dev, device_type, api)


def test_every_release_has_every_convention():
    # The fixtures exercise what a release may change: GPU kernel lookup, workspaces, parallel
    # loops, VM constants, symbolic shapes and tuples, on each target a wheel can emit.
    for version in VERSIONS:
        manifest = MANIFESTS[version]
        assert manifest["tvm_version"] == version
        cases = manifest["cases"]
        assert {"cpu", "opencl", "cuda", "webgpu", "rocm", "metal"} <= {c["target"] for c in cases}
        cpu = {c["name"]: c for c in cases if c["target"] == "cpu"}
        assert "__TVMBackendParallelLaunch" in cpu["parallel_scale"]["context_symbols"]
        assert "__TVMBackendAllocWorkspace" in cpu["workspace"]["context_symbols"]
        assert {"mlp", "mlp_dyn", "convnet"} <= set(cpu)
        lookup = {c["file"]: set(c["context_symbols"]) for c in cases if c["target"] == "opencl"}
        expected = (
            {"__TVMBackendGetFuncFromEnv"}
            if version.startswith("0.25")
            else {"__TVMFFIEnvModLookupFromImports", "__TVMFFIHandleInitOnce"}
        )
        assert all(expected <= names for names in lookup.values()), lookup


ON_DEVICES = [(target, item) for target in DEVICES for item in release_cases(target)]


@pytest.mark.parametrize(
    ("target", "item"), ON_DEVICES, ids=[f"{t}-{case_id(item)}" for t, item in ON_DEVICES]
)
def test_release_artifact_matches_numpy(target, item, libs):
    version, case = item
    dev = device(target)
    run_case(tvm, version, case, library(version, case, libs), dev)


# ------------------------------------------------------------------ the fake CUDA driver and HIP

FAKE_CHILD = """
import json, os, sys
sys.path[:0] = [{tests!r}, {compat!r}]
import tvm
from pathlib import Path
from compat_releases import library, release_cases, run_case
import ctypes
fake = ctypes.CDLL(os.environ[{lib_env!r}])
getattr(fake, {log_fn!r}).restype = ctypes.c_char_p
clear = getattr(fake, {clear_fn!r})
out = {{}}
for version, case in release_cases({target!r}):
    clear()
    dev = tvm.device({device_type}, 0)
    try:
        run_case(tvm, version, case, library(version, case, Path({libs!r})), dev, check=False)
        dev.sync()
        error = None
    except Exception as err:
        error = f"{{type(err).__name__}}: {{err}}"
    out[version + " " + case["file"]] = {{"log": getattr(fake, {log_fn!r})().decode(), "error": error,
                                         "kernels": case.get("device_kernels")}}
print("RESULT:" + json.dumps(out))
"""


def run_on_fake(
    target: str, device_type: int, lib_env: str, lib: str, log_fn: str, clear_fn: str, libs, env=None
):
    code = FAKE_CHILD.format(
        tests=str(REPO / "tests"),
        compat=str(REPO / "tests" / "compat"),
        lib_env=lib_env,
        log_fn=log_fn,
        clear_fn=clear_fn,
        target=target,
        libs=str(libs),
        device_type=device_type,
    )
    return child_result(run_python(textwrap.dedent(code), env={lib_env: lib, **(env or {})}))


def launched(log: str) -> set[str]:
    return {e["kernel"] for kind in ("launch", "launch_ex") for e in parse_log(log, kind)}


def test_release_cuda_artifacts_launch_on_the_fake_driver(tmp_path_factory, libs):
    import sys

    sys.path.insert(0, str(REPO / "tests" / "cuda"))
    from cuda_support import nvrtc_or_skip

    nvrtc_or_skip()
    fake = str(fakes.build("cuda"))
    result = run_on_fake(
        "cuda",
        2,
        "TVM_CUDA_DRIVER_LIBRARY",
        fake,
        "fake_cuda_log",
        "fake_cuda_clear_log",
        libs,
        env={"FAKE_CUDA_CC": "8.0"},
    )
    assert set(result) == {f"{v} {c['file']}" for v, c in release_cases("cuda")}
    bad = {k: r["error"] for k, r in result.items() if r["error"]}
    assert not bad, json.dumps(bad, indent=1)
    for key, r in result.items():
        # Every kernel of the module was launched by the release's host code.
        assert launched(r["log"]) == set(r["kernels"]), (key, r["log"][-2000:])


def test_release_rocm_artifacts_launch_on_the_fake_hip(tmp_path_factory, libs):
    import sys

    sys.path.insert(0, str(REPO / "tests" / "rocm"))
    from rocm_support import fake_arch_env, hip_payload_of

    fake = str(fakes.build("hip"))
    result = run_on_fake(
        "rocm",
        10,
        "TVM_ROCM_LIBRARY",
        fake,
        "fake_hip_log",
        "fake_hip_clear_log",
        libs,
        env=fake_arch_env("gfx90a"),
    )
    assert set(result) == {f"{v} {c['file']}" for v, c in release_cases("rocm")}
    bad = {k: r["error"] for k, r in result.items() if r["error"]}
    assert not bad, json.dumps(bad, indent=1)
    for version, case in release_cases("rocm"):
        r = result[f"{version} {case['file']}"]
        # Every kernel of the module's function table was launched, none rejected.
        kernels = set(hip_payload_of(library(version, case, libs)).kernels)
        assert launched(r["log"]) == kernels, (case["file"], r["log"][-2000:])
        assert "launch_rejected" not in r["log"], (case["file"], r["log"][-2000:])


def test_release_metal_artifacts_match_numpy_on_the_fake_metal(tmp_path_factory):
    # The fake Metal runs its CPU references of these kernels (tests/metal/test_metal_fixtures.py),
    # so the results are checked against numpy, with every release's MSL and host code.
    import shutil
    import sys

    sys.path.insert(0, str(REPO / "tests" / "metal"))
    from test_metal_fixtures import run_child

    env = fakes.metal_environment()
    root = tmp_path_factory.mktemp("release-metal")
    cases = {}
    for version, case in release_cases("metal"):
        library(version, case, root)
        for call in case["calls"]:
            shutil.copy(RELEASES / version / call["npz"], root / version / call["npz"])
        cases.setdefault(version, []).append({**case, "file": case["file"].removesuffix(".gz")})
    body = f"""
dev = tvm.metal(0)
res = {{}}
for version, cases in {cases!r}.items():
    ART = {str(root)!r} + "/" + version
    for case in cases:
        try:
            res[version + " " + case["file"]] = [bool(run_call(case, c, dev)["log"]) for c in case["calls"]]
        except Exception as err:
            res[version + " " + case["file"]] = f"{{type(err).__name__}}: {{err}}"
print(json.dumps(res))
"""
    result = run_child(env, body)
    assert set(result) == {f"{v} {c['file'].removesuffix('.gz')}" for v, c in release_cases("metal")}
    bad = {k: r for k, r in result.items() if not isinstance(r, list) or not all(r)}
    assert not bad, json.dumps(bad, indent=1)
