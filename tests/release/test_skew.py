"""Version skew between separately installed wheels (issue 9, item 4).

Every test builds the wheels it needs at the versions it needs (release_support.Train: once per
session) and pip-installs them into a fresh environment, as a user upgrading one wheel would.
The next ABI major is simulated by building with -DTVM_RUNTIME_ABI_VERSION_MAJOR=2 (tests only)
at the next release line (0.x: the minor), whose backends declare the matching core range.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import release_support as rs

RUN_ALL = ("run:cpu", "run:opencl", "run:vulkan")


@pytest.fixture(scope="module")
def train(tmp_path_factory: pytest.TempPathFactory) -> rs.Train:
    return rs.train(tmp_path_factory)


def base_env(tmp_path_factory: pytest.TempPathFactory, train: rs.Train, name: str) -> rs.Env:
    env = rs.new_env(tmp_path_factory, name)
    env.install(train.wheel(rs.CORE), *(train.wheel(f"{rs.CORE}-{b}") for b in rs.BACKENDS))
    return env


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def installed_libraries(env: rs.Env) -> dict[str, tuple[int, str]]:
    """(inode, sha256) of every native library installed in ``env``: pip writes a new file for
    each one it (re)installs, even when the bytes are the same."""
    site = next((env.path / "lib").glob("python*/site-packages"))
    return {str(p.relative_to(site)): (p.stat().st_ino, digest(p)) for p in sorted(site.glob("tvm/**/*.so"))}


def assert_all_ran(report: dict) -> None:
    for action in RUN_ALL:
        assert rs.require_ran(report, action) == "ok", (action, report)
    assert report["warnings"] == [], report["warnings"]


def test_upgrade_one_backend_in_place(tmp_path_factory, train):
    newer = rs.bumped(train.version, "patch")
    env = base_env(tmp_path_factory, train, "upgrade-vulkan")
    before = installed_libraries(env)
    vulkan_newer = train.wheel(f"{rs.CORE}-vulkan", newer)
    # What a user types; the find-links dir stands in for the index.
    env.pip("install", "--quiet", "-U", *train.links(vulkan_newer), f"tvm-runtime-vulkan=={newer}")
    after = installed_libraries(env)

    versions = env.versions()
    assert versions["tvm-runtime-vulkan"] == newer
    assert versions["tvm-runtime"] == train.version
    assert versions["tvm-runtime-opencl"] == train.version
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    assert changed == {"tvm/backend/vulkan/libtvm_runtime_vulkan.so"}
    env.pip("check")
    report = env.probe(*RUN_ALL)
    assert report["backends"]["vulkan"]["version"] == newer
    assert_all_ran(report)


def test_core_patch_upgrade_under_old_backends(tmp_path_factory, train):
    newer = rs.bumped(train.version, "patch")
    env = base_env(tmp_path_factory, train, "upgrade-core")
    core_newer = train.wheel(rs.CORE, newer)
    env.pip("install", "--quiet", "-U", *train.links(core_newer), f"tvm-runtime=={newer}")
    env.pip("check")  # the backends' declared range admits the patch release

    report = env.probe(*RUN_ALL)
    assert report["versions"]["tvm-runtime"] == newer
    assert report["versions"]["tvm-runtime-opencl"] == train.version
    assert report["versions"]["tvm-runtime-vulkan"] == train.version
    assert {b["status"] for b in report["backends"].values()} == {"loaded"}
    assert_all_ran(report)


def test_pip_refuses_backend_of_next_abi_with_current_core(tmp_path_factory, train):
    env = base_env(tmp_path_factory, train, "pip-refuses")
    next_line = rs.bumped(train.version, "minor")
    vulkan_next = train.wheel(f"{rs.CORE}-vulkan", next_line, abi_major=2)
    # Upgrading the backend alone: its release line needs a core that is not offered.
    proc = env.pip(
        "install", "-U", *train.links(vulkan_next), f"tvm-runtime-vulkan=={next_line}", check=False
    )
    assert proc.returncode != 0
    assert "No matching distribution found for tvm-runtime" in proc.stderr, proc.stderr
    # Asking for the current core with that backend: pip refuses the pair.
    wheels = (train.wheel(rs.CORE), vulkan_next)
    pair = (f"tvm-runtime=={train.version}", f"tvm-runtime-vulkan=={next_line}")
    proc = env.pip("install", *train.links(*wheels), *pair, check=False)
    assert proc.returncode != 0
    assert "ResolutionImpossible" in proc.stderr or "conflicting dependencies" in proc.stderr, proc.stderr
    assert env.versions()["tvm-runtime-vulkan"] == train.version  # nothing was changed


def test_backend_built_for_next_abi_is_refused_at_load(tmp_path_factory, train):
    env = base_env(tmp_path_factory, train, "backend-next-abi")
    next_line = rs.bumped(train.version, "minor")
    vulkan_next = train.wheel(f"{rs.CORE}-vulkan", next_line, abi_major=2)
    env.install(vulkan_next, extra=("--force-reinstall",))  # forced past pip's refusal
    check = env.pip("check", check=False)
    assert check.returncode != 0 and "tvm-runtime-vulkan" in check.stdout

    report = env.probe("run:cpu", "run:opencl", "run:vulkan")
    assert "import_tvm" not in report, report  # import tvm survives
    vulkan = report["backends"]["vulkan"]
    assert vulkan["status"] == "failed"
    assert "ABI 2." in vulkan["reason"] and "ABI 1." in vulkan["reason"], vulkan
    # The fix names the wheels to move so the pair matches again.
    assert "tvm-runtime-vulkan" in vulkan["fix"] and "tvm-runtime" in vulkan["fix"], vulkan
    (warning,) = report["warnings"]
    assert "tvm-runtime-vulkan" in warning and vulkan["fix"] in warning
    # The other backend and the CPU are untouched; Vulkan fails with the reason, not a crash.
    assert rs.require_ran(report, "run:cpu") == "ok"
    assert rs.require_ran(report, "run:opencl") == "ok"
    assert report["results"]["run:vulkan"].startswith("error: RuntimeError")
    assert "ABI" in report["results"]["run:vulkan"]


def test_core_of_next_abi_refuses_current_backends(tmp_path_factory, train):
    env = base_env(tmp_path_factory, train, "core-next-abi")
    next_line = rs.bumped(train.version, "minor")
    core_next = train.wheel(rs.CORE, next_line, abi_major=2)
    env.install(core_next, extra=("--force-reinstall",))
    check = env.pip("check", check=False)
    assert check.returncode != 0 and "tvm-runtime-opencl" in check.stdout

    report = env.probe("run:cpu", "run:opencl")
    assert "import_tvm" not in report, report
    assert report["versions"]["tvm-runtime"] == next_line
    assert len(report["warnings"]) == 2, report["warnings"]
    for name in rs.BACKENDS:
        record = report["backends"][name]
        assert record["status"] == "failed", record
        assert "ABI 1." in record["reason"] and "ABI 2." in record["reason"], record
        assert f"tvm-runtime-{name}" in record["fix"], record
    assert report["results"]["run:cpu"] == "ok"
    assert report["results"]["run:opencl"].startswith("error: RuntimeError"), report["results"]


def test_uninstalling_the_core_under_a_backend(tmp_path_factory, train):
    env = rs.new_env(tmp_path_factory, "no-core")
    env.install(train.wheel(rs.CORE), train.wheel(f"{rs.CORE}-opencl"))
    env.pip("uninstall", "--quiet", "--yes", "tvm-runtime")
    check = env.pip("check", check=False)
    assert "tvm-runtime-opencl" in check.stdout and "tvm-runtime" in check.stdout

    report = env.probe("import:tvm.backend.opencl")
    # Only the backend's namespace portion is left of `tvm`: that must not pass for the runtime.
    assert "import_tvm" in report, report
    hook = report["results"]["import:tvm.backend.opencl"]
    assert hook.startswith("error: ImportError"), hook
    assert "tvm-runtime core wheel" in hook and "pip install -U tvm-runtime" in hook, hook
