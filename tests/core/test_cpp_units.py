"""C++ unit tests of the pure helpers (tests/cpp, doctest): built with the host compiler against
the headers of the installed core wheel and tvm-ffi, then run; every case must pass.  The same
build compiles Disco's cpu collectives from src/extra/disco into their own test (the suite runs
on Linux, the only platform of the extra wheel's Disco)."""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    """The venv's own cmake/ninja (test dependencies) before whatever PATH has."""
    local = Path(sys.executable).with_name(name)
    found = str(local) if local.exists() else shutil.which(name)
    assert found, f"{name} is needed to build the C++ unit tests (pip install {name})"
    return found


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

    def cmakedir(package: str) -> str:
        argv = [sys.executable, "-m", f"{package}.config", "--cmakedir"]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()

    configure = [
        _tool("cmake"),
        "-S",
        str(REPO / "tests" / "cpp"),
        "-B",
        str(build),
        "-G",
        "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
        "-DCMAKE_CXX_COMPILER=g++",
        "-DCMAKE_BUILD_TYPE=Debug",
        f"-Dtvm_runtime_ROOT={cmakedir('tvm')}",
        f"-Dtvm_ffi_ROOT={cmakedir('tvm_ffi')}",
        # tvm-ffi's CMake package asks this interpreter where its library lives.
        f"-DPython_EXECUTABLE={sys.executable}",
        f"-DTVMRT_CORE_SOURCES={REPO / 'src' / 'core'}",
        f"-DTVMRT_EXTRA_SOURCES={REPO / 'src' / 'extra'}",
    ]
    for step in (configure, [_tool("cmake"), "--build", str(build)]):
        proc = subprocess.run(step, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
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
