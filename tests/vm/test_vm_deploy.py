"""Done-when check of the issue: a deploy script written for apache-tvm 0.27
(tvm.runtime.load_module + VirtualMachine) runs the models unchanged, numpy-matching."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from vm_support import device_for, vm_cases

import tvm
from conftest import ARTIFACTS

SCRIPT = Path(__file__).resolve().parent / "deploy_apache_style.py"
CASES = [(t, c) for t in ("cpu", "opencl", "cuda") for c in vm_cases(t)]


@pytest.mark.parametrize(("target", "case_"), CASES, ids=[f"{t}-{c['name']}" for t, c in CASES])
def test_apache_style_deploy_script(target, case_, tmp_path):
    device_for(tvm, target)
    for call in case_["calls"]:
        in_keys = ",".join(a["key"] for a in call["args"])
        out_keys = ",".join(call["outputs"])
        proc = subprocess.run(
            [
                sys.executable,
                str(SCRIPT),
                str(ARTIFACTS / case_["file"]),
                str(ARTIFACTS / call["npz"]),
                target,
                in_keys,
                out_keys,
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        for key in call["outputs"]:
            assert f"MATCH {key}" in proc.stdout
        assert "TIME" in proc.stdout
