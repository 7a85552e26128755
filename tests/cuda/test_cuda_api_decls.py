"""The backend declares its own subset of cuda.h and nvrtc.h (no toolkit at build time); this
compiles those declarations against the real headers, wherever a toolkit or the header wheels
are present, and fails on any mismatched constant, struct layout or signature."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cuda_support import HERE

from conftest import REPO


def cuda_include_dir() -> Path | None:
    # The NVIDIA wheels' headers nox unpacks (nvidia-cuda-runtime ships cuda.h), then a toolkit.
    dirs = [Path(d) for d in os.environ.get("TVM_VENDOR_HEADER_DIRS", "").split(os.pathsep) if d]
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    dirs += [Path(root) / "include" for root in filter(None, roots)]
    return next((d for d in dirs if (d / "cuda.h").is_file()), None)


def nvrtc_include_dir() -> Path | None:
    try:
        import tvm.backend.cuda as hook

        lib = Path(hook.nvrtc_info()["path"])
    except RuntimeError:
        return None
    include = lib.parent.parent / "include"
    return include if (include / "nvrtc.h").is_file() else None


def test_declarations_match_cuda_h(tmp_path):
    include = cuda_include_dir()
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if include is None or cxx is None:
        pytest.skip("no cuda.h (set CUDA_HOME) or no C++ compiler")
    cmd = [cxx, "-std=c++17", "-fsyntax-only", f"-I{include}", f"-I{REPO / 'src' / 'backends' / 'cuda'}"]
    nvrtc = nvrtc_include_dir()
    if nvrtc is not None:
        cmd += ["-DCHECK_NVRTC_H", f"-I{nvrtc}"]
    proc = subprocess.run([*cmd, str(HERE / "check_cuda_api_decls.cc")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    if nvrtc is None:
        pytest.skip("cuda.h checked; nvrtc.h not found (install tvm-runtime-cuda[nvrtc] to check it)")
