"""The suite's pytest-xdist scheduler (tests/xdist_scheduling.py) against workers that die: a
pytest run of probe tests, in a child, where one test ends its worker with exit() and one with
SIGKILL.  Each is reported as that test's failure, says how the worker went down, is not run
again, and every other test still runs: the run finishes instead of stalling until CI's limit
(stock loadscope of pytest-xdist 3.8 hangs on the one-worker case)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent

PROBES = {
    "conftest.py": f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        import xdist_scheduling

        GROUPS = {{"test_d.py": "shared", "test_e.py": "shared"}}

        def pytest_xdist_make_scheduler(config, log):
            return xdist_scheduling.make_scheduler(config, log, GROUPS)

        def pytest_testnodedown(node, error):
            xdist_scheduling.report_dead_worker(node, error)
        """,
    "test_a.py": """
        import os
        def test_a1(): pass
        def test_a2_exits(): os._exit(3)
        def test_a3(): pass
        """,
    "test_b.py": """
        import time
        def test_b1(): time.sleep(0.5)
        def test_b2(): pass
        """,
    "test_c.py": """
        import os, signal
        def test_c1_killed(): os.kill(os.getpid(), signal.SIGKILL)
        """,
    "test_d.py": "def test_d1(): pass\n",
    "test_e.py": "def test_e1(): pass\n",
}


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("xdist-probes")
    for name, text in PROBES.items():
        (root / name).write_text(textwrap.dedent(text))
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


@pytest.mark.parametrize("workers", ["1", "2"])
def test_dead_workers_cost_their_test_only(probes: Path, workers: str) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            workers,
            "--dist",
            "loadscope",
            "-p",
            "no:cacheprovider",
            "-rf",
            ".",
        ],
        cwd=probes,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert re.search(r"\b2 failed, 6 passed\b", out), out
    failed = sorted(re.findall(r"^FAILED (\S+)", out, re.M))
    assert failed == ["test_a.py::test_a2_exits", "test_c.py::test_c1_killed"], out
    assert "went down (exit status 3)" in out, out
    assert "went down (killed by SIGKILL)" in out, out
