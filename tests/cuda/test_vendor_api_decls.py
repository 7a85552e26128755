"""The backends declare their own subsets of vendor C APIs (no vendor SDK at build time):
cublasLt.h and cudnn.h (src/backends/cuda/byoc/cublaslt_api.h, cudnn_api.h) and nccl.h
(src/include/tvm_runtime/backend/disco/nccl_api.h).  This compiles those declarations against the
real headers and fails on any mismatched constant, struct layout or signature.

Where the headers come from: `nox -s tests` runs ci/vendor_headers.py, which keeps the include/
files of the NVIDIA wheels (nvidia-cublas, nvidia-cudnn-cu13, nvidia-nccl-cu13 and the CUDA
runtime, crt and CCCL headers they include) in a cache and passes their directories in
$TVM_VENDOR_HEADER_DIRS; the wheels installed in site-packages (nvidia/*/include) and a toolkit
($CUDA_HOME) are searched too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cuda_support import HERE

from conftest import REPO

HEADER_DIRS_ENV = "TVM_VENDOR_HEADER_DIRS"


def candidate_dirs() -> list[Path]:
    dirs = [Path(d) for d in os.environ.get(HEADER_DIRS_ENV, "").split(os.pathsep) if d]
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    dirs += [Path(r) / "include" for r in filter(None, roots)]
    for entry in sys.path:
        for include in sorted((Path(entry or ".") / "nvidia").glob("*/include")):
            dirs += [include, include / "cccl"]
    return [d for d in dirs if d.is_dir()]


def header_dirs(header: str) -> list[Path]:
    """Directories that hold `header` and the CUDA runtime headers it includes, or []."""
    dirs = candidate_dirs()
    needed = (header, "cuda_runtime_api.h", "crt/host_defines.h")
    if not all(any((d / h).is_file() for d in dirs) for h in needed):
        return []
    return dirs


@pytest.mark.parametrize(
    ("header", "check", "wheel"),
    [
        ("cublasLt.h", "check_cublaslt_api_decls.cc", "nvidia-cublas"),
        ("cudnn.h", "check_cudnn_api_decls.cc", "nvidia-cudnn-cu13"),
        ("nccl.h", "check_nccl_api_decls.cc", "nvidia-nccl-cu13"),
    ],
)
def test_declarations_match_the_vendor_header(header, check, wheel):
    dirs = header_dirs(header)
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if not dirs or cxx is None:
        pytest.skip(
            f"no {header} with the CUDA runtime headers (python ci/vendor_headers.py, or pip install {wheel})"
        )
    cmd = [cxx, "-std=c++17", "-fsyntax-only", "-Wno-deprecated-declarations", *[f"-I{d}" for d in dirs]]
    cmd += [f"-I{REPO / 'src' / 'backends' / 'cuda'}", f"-I{REPO / 'src' / 'include'}", str(HERE / check)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
