"""The examples are deploy scripts in apache-tvm 0.27 style: they must run unchanged."""

from __future__ import annotations

import subprocess
import sys

from conftest import ARTIFACTS, REPO


def test_deploy_script_written_for_apache_tvm_runs_unchanged():
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "deploy_cpu.py"), str(ARTIFACTS / "cpu" / "matmul.so")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "matmul OK" in proc.stdout and "mean (ms)" in proc.stdout


def test_run_everywhere_example_passes_on_available_devices():
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "run_everywhere.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cpu:0" in proc.stdout and "MISMATCH" not in proc.stdout
