"""How apache-tvm's own runtime does on the releases' fixtures (tests/artifacts/releases): run by
hand in a venv with apache-tvm and pytest (the tests' helpers import it), for the compatibility
page's table::

    python3 -m venv /tmp/apache027 && /tmp/apache027/bin/pip install apache-tvm==0.27.0.post1 numpy pytest
    /tmp/apache027/bin/python tests/compat/apache_runtime_matrix.py [--targets cpu opencl]

Prints, per release and target, how many cases match numpy, and every failure.  Each case runs in
a child interpreter, so one that kills the process (0.25's OpenCL host code under apache-tvm
0.27's runtime, which leaves `__TVMBackendGetFuncFromEnv` null) is counted, not fatal.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from compat_releases import VERSIONS, library, release_cases  # noqa: E402

CHILD = """
import sys
sys.path[:0] = [{here!r}, {tests!r}]
import tvm
from compat_releases import MANIFESTS, run_case
case = [c for c in MANIFESTS[{version!r}]["cases"] if c["file"] == {file!r}][0]
dev = tvm.device({device_type}, 0)
if not dev.exist:
    print("NO DEVICE"); sys.exit(3)
run_case(tvm, {version!r}, case, {so!r}, dev)
print("OK")
"""


def run_one(version: str, case: dict, so: str, device_type: int) -> str:
    code = CHILD.format(
        here=str(Path(__file__).resolve().parent),
        tests=str(Path(__file__).resolve().parents[1]),
        version=version,
        file=case["file"],
        so=so,
        device_type=device_type,
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    if proc.returncode == 0:
        return "ok"
    if proc.returncode < 0:
        return f"signal {-proc.returncode}"
    if proc.returncode == 3:
        return "no device"
    return (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:200]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=["cpu", "opencl"])
    ns = parser.parse_args()
    import tvm

    device_types = {"cpu": 1, "cuda": 2, "opencl": 4, "webgpu": 15}
    out: dict[str, dict[str, dict[str, str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for target in ns.targets:
            for version, case in release_cases(target):
                so = library(version, case, Path(tmp))
                status = run_one(version, case, so, device_types[target])
                out.setdefault(version, {}).setdefault(target, {})[case["file"]] = status
    print(json.dumps({"runtime": f"apache-tvm {tvm.__version__}", "results": out}, indent=1))
    for version in VERSIONS:
        for target, results in out.get(version, {}).items():
            ok = sum(s == "ok" for s in results.values())
            print(f"{version:14s} {target:7s} {ok}/{len(results)} ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
