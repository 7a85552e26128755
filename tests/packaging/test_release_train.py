"""The one declaration of the backends (packages/*/pyproject.toml [tool.tvm-runtime]) feeds
everything: the extras, the core's pins, the wheel checks and the core's own C++ table."""

from __future__ import annotations

import importlib.metadata as md
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tvm_ffi

from conftest import REPO, child_result, run_module

sys.path.insert(0, str(REPO / "packages"))
import release_train  # noqa: E402


def test_declarations_are_consistent_and_generated_files_fresh():
    assert release_train.stale_files() == []
    assert release_train.policy_errors() == []
    names = [p.name for p in release_train.backends()]
    assert {"opencl", "vulkan", "cuda"} <= set(names)
    assert release_train.build_order()[0].name == "tvm-runtime"
    assert release_train.build_order()[-1].name == "tvm"


def test_device_types_are_tvm_ffi_enum_members():
    for package in release_train.backends():
        for name in package.device_types:
            assert name in tvm_ffi.DLDeviceType.__members__, (package.distribution, name)


def test_installed_core_carries_the_release_train_extras():
    """`pip install "tvm-runtime[opencl,vulkan,cuda]"` works from the core wheel itself."""
    dist = md.distribution("tvm-runtime")
    provided = set(dist.metadata.get_all("Provides-Extra") or [])
    requires = dist.requires or []
    from packaging.requirements import Requirement

    installed = [Requirement(r) for r in requires]
    for extra, requirements in release_train.extras().items():
        assert extra in provided, extra
        for requirement in requirements:
            # The metadata states the declared requirement, its platform marker (if any) joined
            # with `extra == ...`: the same on every platform, present only under its extra.
            wanted = Requirement(requirement)
            found = [
                r
                for r in installed
                if (r.name, r.extras, r.specifier) == (wanted.name, wanted.extras, wanted.specifier)
                and r.marker is not None
                and any(r.marker.evaluate({"extra": extra, "sys_platform": p}) for p in ("linux", "darwin"))
            ]
            assert found, (extra, requirement, requires)
            for platform in ("linux", "darwin"):
                env = {"extra": extra, "sys_platform": platform}
                expected = wanted.marker is None or wanted.marker.evaluate(env)
                assert found[0].marker.evaluate(env) == expected, (extra, platform, found[0])


def _specifiers(requirement: str) -> set[str]:
    return set(requirement.replace(" ", "").removeprefix("tvm-runtime").split(","))


@pytest.mark.parametrize("package", release_train.backends(), ids=lambda p: p.name)
def test_installed_backend_requires_the_policys_core_range(package):
    requires = md.distribution(package.distribution).requires or []
    # The name ends where the specifiers, extras or markers begin ("tvm-runtime<0.2,>=0.1.0").
    core_pins = [r for r in requires if re.split(r"[<>=!~;\[ (]", r, maxsplit=1)[0] == "tvm-runtime"]
    assert [_specifiers(r) for r in core_pins] == [_specifiers(release_train.core_requirement())]


def test_core_table_is_generated_from_the_declarations():
    import tvm  # noqa: F401  (loads the core)

    distribution_for = tvm_ffi.get_global_func("runtime.DistributionForDevice")
    for package in release_train.backends():
        for name in package.device_types:
            assert str(distribution_for(int(tvm_ffi.DLDeviceType[name]))) == package.distribution
    assert str(distribution_for(int(tvm_ffi.DLDeviceType.kDLCPU))) == "tvm-runtime"


# The two SDK locators: the module inside the runtime and the console script that never starts it.
LOCATORS = {
    "python -m tvm.config": [sys.executable, "-m", "tvm.config"],
    "tvm-runtime-config": [str(Path(sys.executable).parent / "tvm-runtime-config")],
}


def _config(locator: str, flag: str) -> str:
    return subprocess.run(
        [*LOCATORS[locator], flag], capture_output=True, text=True, check=True, cwd="/"
    ).stdout.strip()


@pytest.mark.parametrize("locator", LOCATORS)
def test_sdk_locator_points_at_the_installed_cmake_package(locator):
    import tvm

    cmake_dir = Path(_config(locator, "--cmakedir"))
    assert cmake_dir.is_relative_to(Path(tvm.__path__[0]))
    for name in ("tvm_runtime-config.cmake", "tvm-config.cmake", "TVMRuntimeBackend.cmake"):
        assert (cmake_dir / name).is_file(), name
    assert (Path(_config(locator, "--includedir")) / "tvm_runtime" / "c_api.h").is_file()
    assert (Path(_config(locator, "--libdir")) / "libtvm_runtime.so").is_file()
    assert _config(locator, "--libfiles") == str(Path(_config(locator, "--libdir")) / "libtvm_runtime.so")
    assert _config(locator, "--abi-version") == "{}.{}".format(*release_train.abi_version())
    assert _config(locator, "--version") == md.version("tvm-runtime")
    points = md.entry_points(group="tvm.backends")
    installed = sorted(f"{ep.name} {ep.dist.metadata['Name']}=={ep.dist.version}" for ep in points)
    assert _config(locator, "--backends").splitlines() == installed


def test_console_locator_answers_without_starting_the_runtime():
    result = child_result(run_module("children.config_without_runtime"))
    for flag, (rc, answer) in result["answers"].items():
        assert rc == 0 and answer == _config("python -m tvm.config", flag), flag
    assert result["tvm_imported"] == []
    assert result["mapped"] == []


def test_console_locator_says_what_to_do_when_the_core_is_missing(tmp_path):
    # An interpreter that sees the locator module but no tvm-runtime distribution nor tvm package.
    import tvm_runtime_config

    shutil.copy(tvm_runtime_config.__file__, tmp_path)
    proc = subprocess.run(
        [sys.executable, "-S", "-m", "tvm_runtime_config", "--libdir"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert "tvm-runtime is not installed in this environment: pip install tvm-runtime" in proc.stderr


# ---- the apache-tvm-ffi range: declared once, written everywhere ------------------------------


def _specifier_set(requirement: str) -> set[str]:
    return set(re.sub(r"^apache[-_]tvm[-_]ffi", "", requirement.replace(" ", "")).split(";")[0].split(","))


def test_tvm_ffi_range_is_declared_once_and_stated_the_same_everywhere():
    requirement = release_train.tvm_ffi_requirement()
    stated = release_train.tvm_ffi_rewrites()
    where = {path.relative_to(release_train.PACKAGES.parent).as_posix() for path in stated}
    expected = {f"packages/{p.directory.name}/pyproject.toml" for p in release_train.packages()}
    expected -= {"packages/tvm/pyproject.toml"}  # the meta-package pins the core, not tvm-ffi
    expected |= {"ci/github/release.yml", "examples/backend_template/pyproject.toml"}
    assert expected <= where, expected - where
    assert [path for path, text in stated.items() if path.read_text(encoding="utf-8") != text] == []
    # The installed core requires exactly the declared range.
    requires = md.distribution("tvm-runtime").requires or []
    (ffi,) = [r for r in requires if re.match(r"apache[-_]tvm[-_]ffi\b", r)]
    assert _specifier_set(ffi) == _specifier_set(requirement)


def _release_train_copy(tmp_path: Path):
    """Copy the files `release_train.py check` and `sync` read and write under tmp_path; return a
    runner of that copy's commands."""
    copied = [
        "packages/release_train.py",
        "src/include/tvm_runtime/c_api.h",
        "ci/github/release.yml",
        *(f"packages/{p.directory.name}/pyproject.toml" for p in release_train.packages()),
    ]
    for relative in copied:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / relative, tmp_path / relative)
    script = str(tmp_path / "packages" / "release_train.py")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, check=False)

    return run


def test_check_fails_on_a_drifted_tvm_ffi_range_and_sync_rewrites_it(tmp_path):
    """`release_train.py check` and `sync`, run on a copy of the files they read and write."""
    run = _release_train_copy(tmp_path)
    workflow = tmp_path / "ci" / "github" / "release.yml"
    good = workflow.read_text(encoding="utf-8")
    drifted = "apache-tvm-ffi" + ">=0.1.9,<0.3"  # split: sync must not rewrite this test
    workflow.write_text(good.replace(release_train.tvm_ffi_requirement(), drifted), encoding="utf-8")

    check = run("check")
    assert check.returncode == 1
    assert f"{workflow}: extras, core pins or the apache-tvm-ffi range are stale" in check.stderr
    assert "sync" in check.stderr
    assert run("sync").stdout.strip() == f"rewrote {workflow}"
    assert workflow.read_text(encoding="utf-8") == good
    assert run("check").returncode == 0


def test_platforms_give_markers_and_select_what_each_platform_builds(tmp_path):
    """A backend released on macOS only and test-built on linux-x86_64 (the Metal package's
    declaration): `check` finds the extras stale, `sync` writes them with a darwin marker, and
    each platform builds what it declares."""
    run = _release_train_copy(tmp_path)
    # The Metal package's declaration is copied with the others; its extras are taken out of the
    # generated files, so `check` must find them stale and `sync` must write them back.
    for dist in ("tvm", "tvm-runtime"):
        path = tmp_path / "packages" / dist / "pyproject.toml"
        text = re.sub(r"^metal = .*\n", "", path.read_text(encoding="utf-8"), flags=re.M)
        path.write_text(text, encoding="utf-8")
    assert run("check").returncode == 1
    assert run("sync").returncode == 0
    assert run("check").returncode == 0
    meta = (tmp_path / "packages" / "tvm" / "pyproject.toml").read_text(encoding="utf-8")
    assert "metal = [\"tvm-runtime-metal==0.1.0; sys_platform == 'darwin'\"]" in meta
    assert "\"tvm-runtime-cuda[nvrtc]==0.1.0; sys_platform == 'linux'\"" in meta
    assert '"tvm-runtime-webgpu[wgpu]==0.1.0"' in meta  # released everywhere: no marker
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); import release_train as r;"
        "print(json.dumps({p: [d.name for d in r.build_order(p)] for p in r.PLATFORMS}))"
    )
    order = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "packages")], capture_output=True, text=True, check=True
    )
    built = __import__("json").loads(order.stdout)
    assert "tvm-runtime-metal" in built["linux-x86_64"]
    assert "tvm-runtime-metal" not in built["linux-aarch64"]
    assert built["macos-arm64"] == [
        "tvm-runtime", "tvm-runtime-extra", "tvm-runtime-metal", "tvm-runtime-webgpu", "tvm"
    ]  # fmt: skip
    assert "tvm-runtime-cuda" in built["linux-aarch64"]
    # The markers are valid PEP 508 and select by OS.
    from packaging.requirements import Requirement

    metal = next(r for r in re.findall(r'"([^"]+)"', meta) if r.startswith("tvm-runtime-metal"))
    marker = Requirement(metal).marker
    assert marker.evaluate({"sys_platform": "darwin"}) and not marker.evaluate({"sys_platform": "linux"})


def test_a_platform_outside_the_known_ones_is_refused(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    with pytest.raises(ValueError, match="must list distinct platforms"):
        release_train._platform_list(pyproject, {"platforms": ["macos-x86_64"]}, "platforms", ())
    with pytest.raises(ValueError, match="must list distinct platforms"):
        release_train._platform_list(pyproject, {"platforms": ["linux-x86_64"] * 2}, "platforms", ())
