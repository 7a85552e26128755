"""The fixtures every apache-tvm release on PyPI compiled (tests/artifacts/releases, written by
tests/artifacts/generate_releases.py): their manifests, the libraries decompressed, one case run.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from backend_testing.runners import check_outputs, check_relax_case

from conftest import ARTIFACTS, run_kernel_call

RELEASES = ARTIFACTS / "releases"
# Every release on PyPI whose artifacts tvm-runtime runs; the generator writes one directory each.
VERSIONS = ("0.25.0.post1", "0.26.0", "0.27.0.post1")
MANIFESTS = {v: json.loads((RELEASES / v / "manifest.json").read_text()) for v in VERSIONS}


def release_cases(target: str) -> list[tuple[str, dict[str, Any]]]:
    """(version, case) of every release's cases for `target`."""
    return [(v, c) for v in VERSIONS for c in MANIFESTS[v]["cases"] if c["target"] == target]


def case_id(item: tuple[str, dict[str, Any]]) -> str:
    version, case = item
    return f"{version}-{case['name']}"


def library(version: str, case: dict[str, Any], out_dir: Path) -> str:
    """The case's exported library, decompressed under out_dir (once)."""
    so = out_dir / version / case["file"].removesuffix(".gz")
    if not so.exists():
        so.parent.mkdir(parents=True, exist_ok=True)
        tmp = so.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(gzip.decompress((RELEASES / version / case["file"]).read_bytes()))
        tmp.replace(so)
    return str(so)


def run_case(tvm: Any, version: str, case: dict[str, Any], so: str, dev: Any, check: bool = True) -> None:
    """Every call of the case on `dev`, checked against numpy's expected arrays unless `check` is
    False (a fake driver runs no kernel)."""
    mod = tvm.runtime.load_module(so)
    root = RELEASES / version
    if case["kind_of_case"] == "kernel":
        for call in case["calls"]:
            outputs = run_kernel_call(tvm, case, call, dev, root=root, mod=mod)
            if check:
                check_outputs(case, outputs)
    elif check:
        check_relax_case(tvm, case, mod, dev, root=root)
    else:
        vm = tvm.runtime.vm.VirtualMachine(mod, dev)
        for call in case["calls"]:
            data = np.load(root / call["npz"])
            vm[case["function"]](*[tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]])
