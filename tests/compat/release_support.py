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

# Not from conftest: apache_runtime_matrix.py imports this module in a venv without pytest.
REPO = Path(os.environ.get("TVM_REPO_ROOT", Path(__file__).resolve().parents[2]))
RELEASES = REPO / "tests" / "artifacts" / "releases"
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


def run_case(
    tvm: Any, version: str, case: dict[str, Any], so: str, dev: Any
) -> list[tuple[str, Any, np.ndarray]]:
    """Every call of the case on `dev`: (key, result tensor, numpy's expected array) per output."""
    mod = tvm.runtime.load_module(so)
    vm = tvm.runtime.vm.VirtualMachine(mod, dev) if case["kind_of_case"] == "vm" else None
    results = []
    for call in case["calls"]:
        data = np.load(RELEASES / version / call["npz"])
        args: list[Any] = []
        outputs = []
        for arg in call["args"]:
            if arg["kind"] == "input":
                args.append(tvm.runtime.tensor(data[arg["key"]], dev))
            elif arg["kind"] == "output":
                out = tvm.runtime.empty(arg["shape"], arg["dtype"], dev)
                args.append(out)
                outputs.append((arg["key"], out, data[arg["key"]]))
            else:
                args.append(arg["value"])
        if vm is None:
            mod[case["function"]](*args)
            results.extend(outputs)
            continue
        res = vm[case["function"]](*args)
        got = list(res) if case["output_is_tuple"] else [res]
        assert len(got) == len(call["outputs"]), (case["name"], len(got), call["outputs"])
        results.extend((key, t, data[key]) for key, t in zip(call["outputs"], got, strict=True))
    return results


def check_results(case: dict[str, Any], results: list[tuple[str, Any, np.ndarray]]) -> None:
    assert results
    for key, out, expected in results:
        np.testing.assert_allclose(
            out.numpy().astype("float64"),
            expected.astype("float64"),
            rtol=case["rtol"],
            atol=case["atol"],
            err_msg=f"{case['name']}: {key}",
        )
