"""The benchmark table (benchmarks/bench_table.py, what `nox -s bench` runs) agrees with the tree
and the declarations: every row's script and steps exist, every venv a row names is declared,
every script takes the options the row passes, and the per-backend needs the noxfile reads from
``[tool.tvm-runtime]`` are well formed.  Reads files and parses command lines only: no venv is
made and no benchmark runs (a second or so)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("TVM_REPO_ROOT", Path(__file__).resolve().parents[2]))
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
sys.path.insert(0, str(ROOT / "packages"))
import bench_table  # noqa: E402
import release_train  # noqa: E402

REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[a-z0-9,-]+\])?([<>=!~].*)?$")


def _options_of(script: Path) -> set[str]:
    """The long options a benchmark's command line takes, from its --help (no venv needed: the
    help is printed before anything beyond the standard library and numpy is imported)."""
    proc = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert proc.returncode == 0, f"{script.name} --help failed: {proc.stderr[-1000:]}"
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", proc.stdout))


def test_every_row_names_an_existing_script_and_declared_venvs() -> None:
    venvs = bench_table.venvs()
    rows = bench_table.benches()
    assert {"core", "vm", "load", "rpc", "disco"} <= set(bench_table.names())
    for row in rows:
        assert (BENCHMARKS / row.script).is_file(), row
        for step in row.before:
            assert (BENCHMARKS / step.script).is_file(), step
        undeclared = [v for v in row.venvs if v not in venvs]
        assert not undeclared, f"{row.name}: venvs {undeclared} are not declared in bench_table.venvs()"
        assert bool(row.pythons) != bool(row.runs_in), f"{row.name}: pythons or runs_in"
    # Every results file is written by one row only.
    stems = [Path(r.script).stem for r in rows]
    assert len(stems) == len(set(stems)), stems


def test_every_benchmark_script_is_in_the_table() -> None:
    in_table = {r.script for r in bench_table.benches()} | {
        s.script for r in bench_table.benches() for s in r.before
    }
    scripts = {p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_")}
    assert scripts - in_table == {"bench_table.py"}


def test_venv_requirements_are_well_formed() -> None:
    for venv in bench_table.venvs().values():
        for req in (*venv.requirements, *venv.wheels):
            assert REQUIREMENT.match(req), f"{venv.name}: {req!r}"
    # The venv with every backend installs the peers their benchmarks measure against.
    assert "pyopencl" in bench_table.venvs()["ours-all"].requirements


def test_rows_pass_only_options_their_scripts_take() -> None:
    pythons = {"": "python", **{name: f"/venvs/{name}/bin/python" for name in bench_table.venvs()}}
    rows = bench_table.benches()
    scripts = sorted({row.script for row in rows})
    with ThreadPoolExecutor(max_workers=4) as pool:  # a --help each: mostly interpreter start-up
        options = dict(zip(scripts, pool.map(lambda s: _options_of(BENCHMARKS / s), scripts)))
    for row in rows:
        argv = bench_table.command(row, pythons, ROOT / "results")
        passed = {a for a in argv[2:] if a.startswith("--")}
        missing = passed - options[row.script]
        assert not missing, f"{row.script} does not take {sorted(missing)}"


def test_declared_backend_needs_are_well_formed() -> None:
    for package in release_train.backends():
        for name in package.test_require:
            assert re.fullmatch(r"[a-z0-9]+", name), (package.distribution, name)
        for extra in package.test_extras:
            assert package.index_requirements(extra), (package.distribution, extra)
        for req in package.bench_requirements:
            assert REQUIREMENT.match(req), (package.distribution, req)
    # What the CI machines provide for real (the tests' TVM_TEST_REQUIRE_* variables).
    assert {"TVM_TEST_REQUIRE_OPENCL", "TVM_TEST_REQUIRE_NVRTC"} <= set(release_train.test_require())
    # tvm[all] pulls NVRTC and wgpu-native from the index: installed before our wheels.
    assert any(r.startswith("nvidia-cuda-nvrtc") for r in release_train.index_requirements("all"))
    assert any(r.startswith("wgpu") for r in release_train.index_requirements("webgpu"))
    assert [p.name for p in release_train.test_only_on("linux-x86_64")] == ["metal"]


def test_a_declaration_naming_an_undefined_extra_is_refused(tmp_path: Path) -> None:
    pkg = tmp_path / "tvm-runtime-demo"
    pkg.mkdir()
    (pkg / "pyproject.toml").write_text(
        '[project]\nname = "tvm-runtime-demo"\nversion = "0.1.0"\n'
        '[project.entry-points."tvm.backends"]\ndemo = "tvm.backend.demo"\n'
        '[tool.tvm-runtime]\nrole = "backend"\nextras = { demo = "" }\ntest-extras = ["nope"]\n'
    )
    with pytest.raises(ValueError, match=r"names extras \['nope'\]"):
        release_train._load(pkg)


def test_noxfile_bench_session_reads_the_table() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    (bench,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "bench"]
    source = ast.unparse(bench)
    assert "bench_table.benches()" in source and "bench_table.venvs()" in source
    # No benchmark is named in the session itself any more: the table is the one list.
    assert not re.search(r"_bench\.py", source), "a benchmark script is named in noxfile's bench"
