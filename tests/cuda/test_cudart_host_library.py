"""Artifacts whose host code links the CUDA runtime (CUTLASS kernels: DT_NEEDED libcudart.so.N)
load with the runtime from the nvidia-cuda-runtime wheel: the core's dlopen fails for want of
the soname, asks tvm-runtime-cuda's provider (runtime.library_provider.libcudart, c_api.h 4a),
which finds the wheel's file through the hook's locator and loads it, and opens the artifact
again.  Without a GPU: the fake driver, a fake libcudart (tests/fakes/fake_cudart.c)
laid out like the wheel, and a host library (cudart_host_library.c) built against it here."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import fakes
import pytest
from cuda_support import HERE

from conftest import child_result, pythonpath, run_python


def _cc() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the fake libcudart")
    return cc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    import tvm_ffi.libinfo

    out = tmp_path_factory.mktemp("cudart")
    wheel_lib = out / "site" / "nvidia" / "cuda_runtime" / "lib"  # nvidia-cuda-runtime-cu12's layout
    wheel_lib.mkdir(parents=True)
    cc = _cc()
    # The wheel's file, with the soname the host library records as DT_NEEDED.
    fake = wheel_lib / "libcudart.so.12"
    shutil.copy(fakes.build("cudart"), fake)
    host = out / "cutlass_like_host.so"
    subprocess.run(
        [
            cc,
            "-shared",
            "-fPIC",
            "-O1",
            f"-I{tvm_ffi.libinfo.find_include_path()}",
            "-o",
            str(host),
            str(HERE / "cudart_host_library.c"),
            f"-L{wheel_lib}",
            "-l:libcudart.so.12",
        ],
        check=True,
        capture_output=True,
    )
    return {
        "driver": str(fakes.build("cuda")),
        "site": str(out / "site"),
        "fake": str(fake),
        "host": str(host),
    }


BODY = """
import ctypes, json, os, sys
import numpy as np
import tvm
dev = tvm.cuda(0)
try:
    mod = tvm.runtime.load_module(os.environ["HOST_LIB"])
except RuntimeError as err:
    print("RESULT:" + json.dumps({"error": str(err)}))
    raise SystemExit(0)
src = tvm.runtime.tensor(np.arange(6, dtype="float32"), device=dev)
dst = tvm.runtime.empty((6,), "float32", dev)
count = mod["copy_and_count"](src, dst)
fake = ctypes.CDLL(os.environ["FAKE_CUDART"], mode=os.RTLD_NOLOAD)
fake.fake_cudart_log.restype = ctypes.c_char_p
log = fake.fake_cudart_log().decode()
# Every CUDA runtime this process has mapped: a different one answering the host library's calls
# (count -1, empty fake log) was seen on the GPU machine; this names it.
maps = sorted({ln.split()[-1] for ln in open("/proc/self/maps") if "libcudart" in ln})
print("RESULT:" + json.dumps({"count": count, "dst": dst.numpy().tolist(), "log": log, "maps": maps}))
"""


def _without_cudart(search_path: str) -> str:
    """The tests' premise is that a plain dlopen finds no libcudart: drop the folders that hold
    one (the sanitizer run puts the pip NVIDIA folders on LD_LIBRARY_PATH for NVRTC)."""
    dirs = [d for d in search_path.split(os.pathsep) if d]
    return os.pathsep.join(d for d in dirs if not list(Path(d).glob("libcudart.so*")))


def run(built, **env) -> dict:
    full = {
        "LD_LIBRARY_PATH": _without_cudart(os.environ.get("LD_LIBRARY_PATH", "")),
        "TVM_CUDA_DRIVER_LIBRARY": built["driver"],
        "FAKE_CUDA_DEVICES": "2",
        "HOST_LIB": built["host"],
        "FAKE_CUDART": built["fake"],
        **env,
    }
    proc = run_python(BODY, env=full)
    return child_result(proc)


def test_cudart_from_the_wheel_layout_is_preloaded(built):
    r = run(built, PYTHONPATH=pythonpath(built["site"]), TVM_CUDART_LIBRARY="")
    assert r.get("count") == 2, r
    assert r["dst"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert "cudaMemcpy bytes=24 kind=3" in r["log"] and "cudaGetDeviceCount count=2" in r["log"]


def test_env_override_names_the_file(built):
    r = run(built, TVM_CUDART_LIBRARY=built["fake"])
    assert r.get("count") == 2, r


def test_missing_cudart_names_the_wheel(built):
    r = run(built, TVM_CUDART_LIBRARY="/nonexistent/libcudart.so.12")
    assert 'pip install "tvm-runtime-cuda[cudart-cu12]"' in r["error"], r
    assert "TVM_CUDART_LIBRARY" in r["error"] and "/nonexistent/libcudart.so.12" in r["error"]


def test_the_host_library_really_needs_cudart(built):
    """Proof that the fixture exercises the path: a plain dlopen (no provider) fails for want
    of libcudart.so.12."""
    proc = run_python(
        textwrap.dedent(
            f"""
            import ctypes
            try:
                ctypes.CDLL({built["host"]!r})
            except OSError as err:
                print("FAILED", err)
            """
        ),
        env={"LD_LIBRARY_PATH": ""},
    )
    assert "FAILED" in proc.stdout and "libcudart.so.12" in proc.stdout
