"""The ROCm backend declares its own subset of the HIP runtime API (src/backends/rocm/hip_api.h:
no ROCm at build time).  This compiles those declarations against the real hip_runtime_api.h
(Debian's libamdhip64-dev, installed by ci/install-system-deps.sh) and runs the result: any
mismatched error code, attribute, flag, launch marker or signature fails."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

HERE = Path(__file__).resolve().parent
INCLUDE_DIRS = [Path(os.environ["ROCM_PATH"]) / "include"] if os.environ.get("ROCM_PATH") else []
INCLUDE_DIRS += [Path("/opt/rocm/include"), Path("/usr/include")]


def test_declarations_match_hip_runtime_api_h(tmp_path):
    include = next((d for d in INCLUDE_DIRS if (d / "hip" / "hip_runtime_api.h").is_file()), None)
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if include is None or cxx is None:
        pytest.skip("no hip/hip_runtime_api.h (apt-get install libamdhip64-dev, or set ROCM_PATH)")
    exe = tmp_path / "check_hip_api_decls"
    cmd = [cxx, "-std=c++17", f"-I{include}", f"-I{REPO / 'src' / 'backends' / 'rocm'}"]
    cmd += [f"-I{REPO / 'tests' / 'cuda'}", str(HERE / "check_hip_api_decls.cc"), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run([str(exe)]).returncode == 0, "the HIP_LAUNCH_PARAM_* markers differ"
