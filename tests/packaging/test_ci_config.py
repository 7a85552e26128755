"""The release configuration under ci/ is valid and agrees with the declarations: the hosted
workflow passes GitHub's workflow schema (check-jsonschema's bundled copy, offline), builds every
architecture with ci/build_wheels.py and never publishes the `tvm` meta-package to PyPI, and the
cibuildwheel recipe yields exactly the identifiers and repair excludes of the release train."""

from __future__ import annotations

import re
import subprocess
import sys

import tomllib
import yaml

from conftest import REPO

sys.path.insert(0, str(REPO / "packages"))
sys.path.insert(0, str(REPO / "ci"))
import build_wheels  # noqa: E402
import release_train  # noqa: E402

WORKFLOW = REPO / "ci" / "github" / "release.yml"
CIBUILDWHEEL = REPO / "ci" / "cibuildwheel.toml"


def _run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)


def _steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_release_workflow_matches_github_schema():
    proc = _run(
        sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_release_workflow_builds_every_arch_with_build_wheels():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    wheels = workflow["jobs"]["wheels"]
    assert wheels["strategy"]["matrix"]["arch"] == list(build_wheels.ARCHES)
    runs = [step["run"] for step in _steps(workflow) if "run" in step]
    assert any("ci/build_wheels.py" in run and "matrix.arch" in run for run in runs), runs
    # Every repository file a step runs exists.
    for run in runs:
        for path in re.findall(r"\b(?:ci|tests|packages)/[\w./-]+\.(?:py|sh)\b", run):
            assert (REPO / path).is_file(), f"{WORKFLOW.name} runs {path}, which does not exist"
    # Every action is pinned to a version.
    for step in _steps(workflow):
        if "uses" in step:
            assert "@" in step["uses"], step


def test_release_workflow_keeps_the_meta_package_off_pypi():
    """`tvm` on PyPI is an unrelated project: the publish job must remove our meta wheel first."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = workflow["jobs"]["publish"]["steps"]
    publish = next(i for i, s in enumerate(steps) if "pypi-publish" in s.get("uses", ""))
    meta = release_train.packages()[-1]
    assert meta.role == "meta"
    removed = [s["run"] for s in steps[:publish] if "run" in s and "rm " in s["run"]]
    assert any(f"{meta.distribution}-*-py3-none-any.whl" in r for r in removed), steps


def test_cibuildwheel_identifiers_and_repair_excludes():
    proc = _run(
        sys.executable,
        "-m",
        "cibuildwheel",
        "--print-build-identifiers",
        "--platform",
        "linux",
        "--archs",
        ",".join(build_wheels.ARCHES),
        "--config-file",
        str(CIBUILDWHEEL),
        str(release_train.core().directory),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == [f"cp311-manylinux_{arch}" for arch in build_wheels.ARCHES]
    config = tomllib.loads(CIBUILDWHEEL.read_text(encoding="utf-8"))["tool"]["cibuildwheel"]
    for arch in build_wheels.ARCHES:
        assert config[f"manylinux-{arch}-image"] == build_wheels.MANYLINUX
    repair = config["repair-wheel-command"]
    excludes = [e.strip("'\"") for e in re.findall(r"--exclude (\S+)", repair)]
    assert sorted(excludes) == sorted(release_train.repair_excludes())
    assert f"--plat {build_wheels.MANYLINUX}_" in repair
