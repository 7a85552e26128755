"""The C headers of NVIDIA's CUDA libraries, for the declaration checks of the tests
(tests/cuda/test_vendor_api_decls.py: src/backends/cuda/byoc/cublaslt_api.h, cudnn_api.h and
src/include/tvm_runtime/backend/disco/nccl_api.h against cublasLt.h, cudnn.h and nccl.h).

NVIDIA publishes no headers-only packages: the headers ship inside the library wheels (cuBLAS and
cuDNN are hundreds of MB).  So each wheel below is downloaded once (pip, no dependencies), only
its include/ files are kept, in a cache outside the repository, and the wheel is deleted; later
runs find the cache and download nothing.  Prints the include directories, one per line.

    python ci/vendor_headers.py [--cache DIR]     (default $TVM_VENDOR_HEADERS_CACHE, else
                                                   ~/.cache/tvm-runtime/vendor-headers)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

# The releases the first H200 run used (CUDA 13.0 runtime, cuBLAS 13.1, cuDNN 9 and NCCL 2.30
# for CUDA 13).  crt/host_defines.h, which every CUDA runtime header includes, moved to its own
# wheel in CUDA 13, and cuda_fp16.h (included by cublas_api.h) needs CCCL's <nv/target>.
WHEELS = [
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-cccl==13.0.85",
    "nvidia-cublas==13.1.0.3",
    "nvidia-cudnn-cu13==9.13.0.50",
    "nvidia-nccl-cu13==2.30.4",
]


def default_cache() -> Path:
    env = os.environ.get("TVM_VENDOR_HEADERS_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "tvm-runtime" / "vendor-headers"


def headers_of(requirement: str, cache: Path) -> list[Path]:
    """The include directories of one wheel, downloading and unpacking it the first time."""
    target = cache / requirement.replace("==", "-")
    done = target / ".complete"
    if not done.is_file():
        shutil.rmtree(target, ignore_errors=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                 "--dest", tmp, requirement],
                check=True,
            )  # fmt: skip
            (wheel,) = Path(tmp).glob("*.whl")
            with zipfile.ZipFile(wheel) as z:
                members = [m for m in z.namelist() if "/include/" in m and not m.endswith("/")]
                z.extractall(target, members)
        done.write_text(requirement + "\n")
    # nvidia/<component or cu13>/include; CCCL keeps its tree (<nv/target>, <cuda/std/...>) one
    # level down, in include/cccl.
    dirs = sorted(p for p in target.glob("nvidia/*/include") if p.is_dir())
    return [sub for d in dirs for sub in (d, d / "cccl") if sub.is_dir()]


def include_dirs(cache: Path) -> list[Path]:
    out: list[Path] = []
    for requirement in WHEELS:
        for d in headers_of(requirement, cache):
            if d not in out:
                out.append(d)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, default=default_cache())
    args = parser.parse_args()
    start = time.monotonic()
    dirs = include_dirs(args.cache)
    print(f"vendor headers ready in {time.monotonic() - start:.1f} s", file=sys.stderr)
    for d in dirs:
        print(d)


if __name__ == "__main__":
    main()
