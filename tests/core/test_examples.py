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


def test_run_everywhere_shows_what_the_kernel_caches_save():
    # Two fresh processes over the same initially empty caches (ours and the drivers'): the
    # second one's first calls must find every OpenCL kernel cached instead of compiled by PoCL.
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "run_everywhere.py"), "--cold-and-warm"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header, *lines = proc.stdout.splitlines()
    assert "cold first" in header and "warm first" in header
    rows = [line.split() for line in lines if line.split()[3:4] == ["ok"]]
    # device, artifact, kind, ok, cold, "ms", warm, "ms", next calls, "us"
    assert rows and all(len(r) == 10 and r[5] == r[7] == "ms" for r in rows)
    opencl = [(float(r[4]), float(r[6])) for r in rows if r[0].startswith("opencl")]
    if opencl:
        # A PoCL compile takes hundreds of milliseconds, a cached binary about one.
        assert all(warm < cold / 5 for cold, warm in opencl), opencl
