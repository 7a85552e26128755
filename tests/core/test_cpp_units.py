"""C++ unit tests of the pure helpers (tests/cpp, doctest): built with the host compiler against
the headers of the installed core wheel and tvm-ffi, then run; every case must pass.  The same
build compiles Disco's cpu collectives from src/extra/disco into their own test (the suite runs
on Linux, the only platform of the extra wheel's Disco)."""

from __future__ import annotations

import hashlib
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cmake_build import cmake_build, package_config

REPO = Path(__file__).resolve().parents[2]


def _sha256_vectors(path: Path) -> None:
    # Every length around the 64-byte block and the 56-byte padding boundary, then longer inputs.
    rng = random.Random(27)
    lengths = list(range(0, 130)) + [1000, 4096, 65537]
    lines = []
    for n in lengths:
        data = bytes(rng.randrange(256) for _ in range(n))
        lines.append(f"{data.hex() or '-'} {hashlib.sha256(data).hexdigest()}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def cpp_build(tmp_path_factory) -> Path:
    build = tmp_path_factory.mktemp("cpp") / "build"
    defines = {
        "tvm_runtime_ROOT": package_config("tvm", "--cmakedir"),
        "tvm_ffi_ROOT": package_config("tvm_ffi", "--cmakedir"),
        # tvm-ffi's CMake package asks this interpreter where its library lives.
        "Python_EXECUTABLE": sys.executable,
        "TVMRT_CORE_SOURCES": str(REPO / "src" / "core"),
        "TVMRT_EXTRA_SOURCES": str(REPO / "src" / "extra"),
    }
    cmake_build(REPO / "tests" / "cpp", build, "Debug", defines)
    return build


def _assert_all_cases_passed(stdout: str) -> None:
    # doctest's summary: every case ran and passed (a filtered or empty run would say otherwise).
    summary = re.search(r"test cases: +(\d+) \| +(\d+) passed \| +0 failed \| +0 skipped", stdout)
    assert summary and summary.group(1) == summary.group(2) != "0", stdout


def test_cpp_unit_tests_pass(cpp_build, tmp_path):
    build = cpp_build
    vectors = tmp_path / "sha256.txt"
    _sha256_vectors(vectors)
    env = dict(os.environ, TVM_UNIT_SHA256_VECTORS=str(vectors))
    proc = subprocess.run([str(build / "unit_tests")], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    _assert_all_cases_passed(proc.stdout)


def test_disco_collectives_pass(cpp_build):
    """Every collective x dtype x reduce kind over shared memory and TCP loopback, abort and peer
    death (tests/cpp/disco_collectives_test.cc); a rank that hangs makes the binary exit 3."""
    proc = subprocess.run(
        [str(cpp_build / "disco_collectives_test")], capture_output=True, text=True, timeout=90
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    _assert_all_cases_passed(proc.stdout)
