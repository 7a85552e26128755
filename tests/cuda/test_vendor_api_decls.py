"""The backend declares its own subsets of cublasLt.h and cudnn.h (src/backends/cuda/
cublaslt_api.h, cudnn_api.h: no toolkit at build time); this compiles those declarations
against the real headers wherever they are present (the nvidia-cublas / nvidia-cudnn wheels'
include/, with the CUDA runtime headers of a toolkit) and fails on any mismatched constant,
struct layout or signature."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cuda_support import HERE

from conftest import REPO


def header_dirs(header: str) -> list[Path]:
    """Directories that hold `header` and the CUDA runtime headers it includes."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    dirs = [Path(r) / "include" for r in filter(None, roots)]
    for entry in sys.path:
        nvidia = Path(entry or ".") / "nvidia"
        dirs += [nvidia / sub / "include" for sub in ("cu13", "cublas", "cudnn", "cuda_runtime")]
    dirs = [d for d in dirs if d.is_dir()]
    needed = (header, "cuda_runtime_api.h", "crt/host_defines.h")
    if not all(any((d / h).is_file() for d in dirs) for h in needed):
        return []
    return dirs


@pytest.mark.parametrize(
    ("header", "check", "wheel"),
    [
        ("cublasLt.h", "check_cublaslt_api_decls.cc", "nvidia-cublas"),
        ("cudnn.h", "check_cudnn_api_decls.cc", "nvidia-cudnn-cu13"),
    ],
)
def test_declarations_match_the_vendor_header(header, check, wheel):
    dirs = header_dirs(header)
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if not dirs or cxx is None:
        pytest.skip(f"no {header} with the CUDA runtime headers (pip install {wheel}, and a CUDA toolkit)")
    cmd = [cxx, "-std=c++17", "-fsyntax-only", "-Wno-deprecated-declarations", *[f"-I{d}" for d in dirs]]
    cmd += [f"-I{REPO / 'src' / 'backends' / 'cuda'}", str(HERE / check)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
