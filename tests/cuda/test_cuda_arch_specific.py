"""Arch-specific NVRTC targets (sm_90a, sm_100a, ...), without a GPU.

apache-tvm 0.27's CUDA target picks the arch-specific architecture for the GPU it detects from
compute capability 9.0 on (sm_90a on Hopper, sm_100a on Blackwell), and its Hopper/Blackwell
kernels use instructions that exist only there (wgmma, tcgen05, setmaxnreg): ptxas rejects them
for plain sm_90.  The runtime compiles an artifact's CUDA source for a 9.0+ device the same way;
PTX for a GPU newer than NVRTC stays portable (compute_XY).
"""

from __future__ import annotations

import json
import textwrap

import fakes
import pytest
from backend_testing.devices import device_or_skip
from backend_testing.payloads import HANDLE, Kernel
from cuda_support import HERE, load_payload, nvrtc_or_skip, write_cuda_payload

import tvm
import tvm.backend.cuda as hook
from conftest import REPO, run_python

# The smallest Hopper-only kernel: a warpgroup MMA fence.
WGMMA = textwrap.dedent(
    """
    extern "C" __global__ void __launch_bounds__(128) wgmma_fence(float* out) {
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      out[threadIdx.x] = 1.0f;
    }
    """
)


@pytest.fixture(scope="module")
def nvrtc():
    return nvrtc_or_skip()


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CUDA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TVM_CUDA_CACHE_DISABLE", raising=False)
    return tmp_path / "cache"


def test_wgmma_compiles_for_sm_90a_and_ptxas_rejects_it_for_sm_90(nvrtc, cache):
    if 90 not in nvrtc["supported_archs"]:
        pytest.skip(f"this NVRTC does not target sm_90: {nvrtc['supported_archs']}")
    with pytest.raises(RuntimeError, match=r"for sm_90:(.|\n)*wgmma(.|\n)*not supported on \.target 'sm_90'"):
        hook.compile_source(WGMMA, "sm_90")
    out = hook.compile_source(WGMMA, "sm_90a")
    assert (out["format"], out["target"]) == ("cubin", "sm_90a")
    assert "--gpu-architecture=sm_90a" in out["options"]
    assert out["image"][:4] == b"\x7fELF" and b"wgmma_fence" in out["image"]


def test_cache_keys_hold_the_exact_target(nvrtc, cache):
    source = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 2.0f; }'
    plain = hook.compile_source(source, "sm_90")
    specific = hook.compile_source(source, "sm_90a")
    assert plain["cache_file"] != specific["cache_file"]
    assert not specific["from_cache"]  # sm_90's cubin is not served for sm_90a
    again = hook.compile_source(source, "sm_90a")
    assert again["from_cache"] and again["cache_file"] == specific["cache_file"]
    assert again["image"] == specific["image"] != plain["image"]


def test_ptx_for_a_gpu_newer_than_nvrtc_stays_portable(nvrtc, cache):
    newest = nvrtc["supported_archs"][-1]
    source = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 2.0f; }'
    out = hook.compile_source(source, f"sm_{newest + 100}")
    assert (out["format"], out["target"]) == ("ptx", f"compute_{newest}")
    assert f".target sm_{newest}\n" in out["image"].decode()  # not sm_XXa: runs on any newer GPU
    with pytest.raises(RuntimeError, match=f"cannot compile for sm_{newest + 100}a"):
        hook.compile_source(source, f"sm_{newest + 100}a")  # arch-specific has no portable form


@pytest.mark.parametrize(
    ("arch", "ok"),
    [
        ("sm_90a", True),
        ("sm_100a", True),
        ("sm_100f", True),
        ("sm_120a", True),
        ("sm_86a", False),  # arch-specific targets start with Hopper
        ("sm_90f", False),  # family targets start with Blackwell
        ("sm_90b", False),
        ("sm_", False),
        ("sm_a", False),
        ("sm_-90", False),
        ("sm_90 ", False),
        ("compute_90a", False),
    ],
)
def test_arch_strings(nvrtc, cache, arch, ok):
    source = 'extern "C" __global__ void k() {}'
    if ok:
        sm = int(arch[3:-1])
        if sm not in nvrtc["supported_archs"]:
            pytest.skip(f"this NVRTC does not target sm_{sm}")
        assert hook.compile_source(source, arch)["target"] == arch
    else:
        with pytest.raises(ValueError, match=r"expected an architecture like 'sm_86', 'sm_90a'"):
            hook.compile_source(source, arch)


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("cuda"))


@pytest.mark.parametrize(("cc", "target"), [("9.0", "sm_90a"), ("8.6", "sm_86")])
def test_device_compiles_for_its_arch_specific_target(nvrtc, fake, tmp_path, cc, target):
    """A `cuda` module (CUDA source, as apache-tvm 0.27 writes it) on a fake device of compute
    capability `cc`: the source is compiled for `target` (arch-specific from 9.0 on, so the
    wgmma kernel compiles on Hopper), and the cubin the driver loads is that compilation."""
    if int(target[3:].rstrip("a")) not in nvrtc["supported_archs"]:
        pytest.skip(f"this NVRTC does not target {target}")
    source = WGMMA if target.endswith("a") else WGMMA.replace("wgmma.fence.sync.aligned;", "")
    proc = run_python(
        f"""
        import json, sys
        sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
        import numpy as np
        import tvm
        import tvm.backend.cuda as hook
        from backend_testing.payloads import HANDLE, Kernel
        from fakes import parse_log
        import fakes
        from cuda_support import load_payload, write_cuda_payload
        fake = fakes.FakeCuda({fake!r})
        kernel = Kernel("wgmma_fence", [HANDLE], ["threadIdx.x"])
        mod = load_payload(write_cuda_payload([kernel], {source!r}))
        out = tvm.runtime.empty((128,), "float32", tvm.cuda(0))
        mod["wgmma_fence"](out, 128)
        loads = parse_log(fake.log(), "module_load")
        same = hook.compile_source({source!r}, {target!r}, driver_major=13)
        image = same["image"]
        h = 1469598103934665603
        for b in image:
            h = ((h ^ b) * 1099511628211) % 2**64
        print("RESULT:" + json.dumps(dict(loads=loads, fnv=f"{{h:016x}}", from_cache=same["from_cache"],
                                          target=same["target"])))
        """,
        env={
            "TVM_CUDA_DRIVER_LIBRARY": fake,
            "FAKE_CUDA_CC": cc,
            "TVM_CUDA_CACHE_DIR": str(tmp_path / "cache"),
            "TVM_CUDA_CACHE_DISABLE": "",
        },
    )
    r = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")][-1][7:])
    (load,) = r["loads"]
    assert load["kind"] == "cubin" and load["fnv"] == r["fnv"], r
    # The device's compile went to the cache under the exact target compile_source names.
    assert r["from_cache"] and r["target"] == target, r


def test_wgmma_kernel_runs_on_a_hopper_gpu(nvrtc):
    """On a real Hopper GPU (the prepared GPU check): the wgmma kernel compiles for the device
    (sm_90a), loads and runs."""
    dev = device_or_skip(tvm, tvm.cuda(0), 2, "CUDA", fallback_reason="no CUDA device 0")
    if "fake" in hook.driver_info()["library"]:
        pytest.skip("no CUDA device: the fake driver runs no kernels (this test needs a real Hopper GPU)")
    if dev.compute_version != "9.0":
        pytest.skip(f"no CUDA device of compute capability 9.0 (Hopper): device 0 is {dev.compute_version}")
    mod = load_payload(write_cuda_payload([Kernel("wgmma_fence", [HANDLE], ["threadIdx.x"])], WGMMA))
    out = tvm.runtime.empty((128,), "float32", dev)
    mod["wgmma_fence"](out, 128)
    assert (out.numpy() == 1.0).all()
