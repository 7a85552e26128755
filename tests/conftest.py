"""Shared fixtures: the artifact manifest, subprocess helpers and the test-only backend wheels.

Tests run against the *installed* wheels (nox -s tests installs them into a fresh venv); the
repository's packages/ directory is never put on sys.path.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import process_audit
import pytest
import skip_audit
from cmake_build import pip_wheel_command

# The persistent kernel caches (OpenCL program binaries, Vulkan pipeline caches, CUDA cubins) and
# the weight store of this whole run, its subprocesses included, live in one temporary directory:
# the suite never reads or writes ~/.cache/tvm-runtime.  Tests about the caches point them
# elsewhere again.
# (Children that import this file inherit the setting and keep any cache a test gave them.)
if "TVM_TEST_KERNEL_CACHES" not in os.environ:
    os.environ["TVM_TEST_KERNEL_CACHES"] = tempfile.mkdtemp(prefix="tvm-test-kernel-caches-")
    atexit.register(shutil.rmtree, os.environ["TVM_TEST_KERNEL_CACHES"], ignore_errors=True)
    for _backend in ("opencl", "vulkan", "cuda", "weight"):
        os.environ[f"TVM_{_backend.upper()}_CACHE_DIR"] = f"{os.environ['TVM_TEST_KERNEL_CACHES']}/{_backend}"
KERNEL_CACHES = Path(os.environ["TVM_TEST_KERNEL_CACHES"])

REPO = Path(os.environ.get("TVM_REPO_ROOT", Path(__file__).resolve().parent.parent))
ARTIFACTS = REPO / "tests" / "artifacts"
MANIFEST = json.loads((ARTIFACTS / "manifest.json").read_text())


def cases(target: str, kind: str = "kernel") -> list[dict[str, Any]]:
    return [c for c in MANIFEST["cases"] if c["target"] == target and c["kind_of_case"] == kind]


def case(target: str, name: str) -> dict[str, Any]:
    for c in MANIFEST["cases"]:
        if c["target"] == target and c["name"] == name:
            return c
    raise KeyError(f"{target}/{name}")


def run_kernel_call(
    tvm: Any, case_: dict[str, Any], call: dict[str, Any], dev: Any, root: Path = ARTIFACTS, mod: Any = None
) -> list[tuple[str, Any, np.ndarray]]:
    """Run one manifest call on ``dev``; returns (key, tensor, expected) per output.  Paths are
    relative to ``root``; ``mod``, when given, is the case's module already loaded."""
    mod = mod if mod is not None else tvm.runtime.load_module(str(root / case_["file"]))
    data = np.load(root / call["npz"])
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
    mod[case_["function"]](*args)
    return outputs


def pythonpath(*dirs: str | os.PathLike) -> str:
    """``dirs`` ahead of the inherited PYTHONPATH, for a child's environment: the wheels under test
    may themselves be on PYTHONPATH (a `pip --target` install, as the prepared GPU check makes)."""
    inherited = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([*(os.fspath(d) for d in dirs), *([inherited] if inherited else [])])


def run_python(
    code: str, env: dict[str, str] | None = None, cwd: str | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter of this venv (e.g. to test import-time behaviour)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd or "/",
        timeout=300,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"child failed ({proc.returncode}):\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


def run_module(
    module: str, *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """Run ``python -m <module> args...`` (a child program of tests/children, or a command such
    as tvm.backend) in a fresh interpreter of this venv with tests/ on its path, as run_python
    runs code."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    inherited = full_env.get("PYTHONPATH")
    full_env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), *([inherited] if inherited else [])])
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd="/",
        timeout=300,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"python -m {module} failed ({proc.returncode}):\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


def child_result(proc: subprocess.CompletedProcess) -> Any:
    """The JSON a child printed last on a ``RESULT:`` line (the child programs' way of reporting);
    a failure quoting the child's output when it printed none."""
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    assert lines, proc.stdout + proc.stderr
    return json.loads(lines[-1][len("RESULT:") :])


def _build_testdev(out_dir: Path, mode: str) -> Path:
    """Build the template backend (examples/backend_template) against the installed core wheel only
    (no isolation: this venv's tvm-runtime provides the headers and the CMake package)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    build_dir = out_dir / f"build-{mode}"
    source = REPO / "examples" / "backend_template"
    command = pip_wheel_command(source, out_dir / mode, build_dir, f"cmake.define.TESTDEV_MODE={mode}")
    subprocess.run(command, check=True)
    (wheel,) = (out_dir / mode).glob("*.whl")
    return wheel


@pytest.fixture(scope="session")
def testdev_install(tmp_path_factory: pytest.TempPathFactory):
    """Factory: install a testdev variant with `pip --target` and return that directory.

    A --target install is a different sys.path entry than the core's site-packages, which is
    exactly the split layout the backend discovery must support.
    """
    root = tmp_path_factory.mktemp("testdev")
    installed: dict[str, Path] = {}

    def install(mode: str = "normal") -> Path:
        if mode not in installed:
            wheel = _build_testdev(root / "wheels", mode)
            target = root / f"site-{mode}"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--no-deps",
                    "--target",
                    str(target),
                    str(wheel),
                ],
                check=True,
            )
            installed[mode] = target
        return installed[mode]

    return install


# ---- no process left behind (tests/process_audit.py) ---------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind() -> Iterator[None]:
    """Fails the run when a process it started is alive after every test and fixture finished.

    Set up before any other fixture, so torn down after all of them: servers, trackers, worker
    pools and their children must be gone by then.  Every child inherits the run's mark
    (process_audit.MARK), so an orphan that init adopted is found too; leftovers are reported,
    then killed.
    """
    token = f"{os.getpid()}-{time.time_ns()}"
    os.environ[process_audit.MARK] = token
    yield
    found = process_audit.wait_for_leftovers(os.getpid(), token, grace=10.0)
    if found:
        process_audit.kill(found)
        pytest.fail(
            "processes started by the test run were still alive at its end (killed now); stop "
            "each one, and what it started, where it was started:\n  " + "\n  ".join(map(str, found)),
            pytrace=False,
        )


# ---- the skip audit (tests/skip_audit.py) --------------------------------------------------------

_SKIPPED: list[tuple[str, str]] = []
_SKIP_BUDGET = REPO / "tests" / "skip_budget.json"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and hasattr(report, "wasxfail"):
        # An expected failure checks nothing either: audited like a skip, as "xfail: <reason>",
        # so only the xfails tests/skip_budget.json names (known upstream bugs) may happen.
        _SKIPPED.append((report.nodeid, f"xfail: {report.wasxfail}"))
    elif report.skipped:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        _SKIPPED.append((report.nodeid, reason.removeprefix("Skipped: ")))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("TVM_TEST_SKIP_AUDIT") != "1" or hasattr(session.config, "workerinput"):
        return  # under pytest-xdist the controller sees every worker's reports and audits once
    categories = skip_audit.load_budget(_SKIP_BUDGET)
    problems = skip_audit.audit(_SKIPPED, categories)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(skip_audit.summary(_SKIPPED, categories))
        for problem in problems:
            reporter.write_line(f"SKIP AUDIT FAILED: {problem}", red=True)
    if problems and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# ---- pytest-xdist: what must share a worker --------------------------------------------------------

# Tests that share an expensive session fixture run on one worker, so it is built once per run:
# the release train's wheels (every module of tests/release) and the template backend's wheels
# (every module that asks for testdev_install). Any other module is its own group, so its module
# fixtures (a CMake build, a venv) are made once too.
_TESTS = Path(__file__).resolve().parent


def _shared_fixture_groups() -> dict[str, str]:
    groups: dict[str, str] = {}
    for path in sorted(_TESTS.rglob("test_*.py")):
        module = path.relative_to(_TESTS).as_posix()
        if module.startswith("release/"):
            groups[module] = "release-train"
        elif "testdev_install" in path.read_text(encoding="utf-8"):
            groups[module] = "testdev"
    return groups


if importlib.util.find_spec("xdist") is not None:
    import xdist_scheduling

    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        """`nox -s tests` runs `-n auto --dist loadscope`; this scheduler is loadscope with the
        groups above. (pytest-xdist's own `xdist_group` marks cannot do it under pytest 9.2: the
        worker renames node ids through an attribute pytest no longer reads.)"""
        return xdist_scheduling.make_scheduler(config, log, _shared_fixture_groups())

    def pytest_testnodedown(node: Any, error: object | None) -> None:
        xdist_scheduling.report_dead_worker(node, error)
