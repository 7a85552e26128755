"""Real wheels of several versions, real pip installs, real environments: the skew, composition and
partial-backend tests (issue 9, items 4-6) share everything here.

* ``Train`` builds wheels of this repository at a chosen version (and, for tests only, ABI major)
  from a *staged copy* of the package directory whose pyproject.toml says that version: the
  sources, cmake/ and the other packages are symlinks to the repository, so nothing in the working
  tree changes and each wheel is built once per session (``pip wheel --no-build-isolation``
  against this venv's build tools and installed core).  The wheels of the declared version come
  from ``$TVM_WHEELHOUSE`` (what ``nox -s tests`` built and installed) when set.
* ``BasePrefix`` is a stand-alone Python prefix (like a conda base environment, not a venv) that
  holds apache-tvm-ffi, numpy and pip; every ``Env`` is a ``venv --system-site-packages`` over it,
  so the core and backends are really pip-installed in each test while tvm-ffi comes from the
  base: the conda-base + pip-venv layout users have.
* ``Env.probe`` runs ``probe.py`` in the environment and returns what it saw as a dict.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cmake_build import pip_wheel_command

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - scikit-build-core brings tomli below 3.11
    import tomli as tomllib

from conftest import ARTIFACTS, REPO

HERE = Path(__file__).resolve().parent
PROBE = HERE / "probe.py"
CORE = "tvm-runtime"
BACKENDS = ("opencl", "vulkan")
TIMEOUT = 600


def declared_version(dist: str) -> str:
    data = tomllib.loads((REPO / "packages" / dist / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"]["version"]


def bumped(version: str, part: str) -> str:
    """``0.1.0`` -> ``0.1.1`` (part="patch") or ``0.2.0`` (part="minor": the next ABI major's
    release line, as 0.x versions break on the minor)."""
    major, minor, patch = (int(p) for p in version.split(".")[:3])
    return f"{major}.{minor}.{patch + 1}" if part == "patch" else f"{major}.{minor + 1}.0"


def core_range(version: str) -> str:
    """The core range a backend of release line ``version`` declares: ``>=0.2,<0.3``."""
    major, minor = (int(p) for p in version.split(".")[:2])
    return f">={major}.{minor},<{major}.{minor + 1}"


def run(cmd: list[str], check: bool = True, **kwargs: Any) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


# ------------------------------------------------------------------------------------- wheels


@dataclass(frozen=True)
class WheelSpec:
    dist: str
    version: str
    abi_major: int | None = None  # None: the header's own (release builds)

    @property
    def key(self) -> str:
        return f"{self.dist}-{self.version}" + (f"-abi{self.abi_major}" if self.abi_major else "")


class Train:
    """Builds (once per session) and hands out wheels; each spec gets its own find-links dir so
    a test offers pip exactly the wheels it means to."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.version = declared_version(CORE)
        self._built: dict[str, Path] = {}
        self._lock = threading.Lock()
        wheelhouse = os.environ.get("TVM_WHEELHOUSE")
        self.wheelhouse = Path(wheelhouse) if wheelhouse else None

    def wheel(self, dist: str, version: str | None = None, abi_major: int | None = None) -> Path:
        spec = WheelSpec(dist, version or self.version, abi_major)
        with self._lock:
            if spec.key not in self._built:
                self._built[spec.key] = self._from_wheelhouse(spec) or self._build(spec)
            return self._built[spec.key]

    def links(self, *wheels: Path) -> list[str]:
        """pip arguments offering exactly ``wheels`` (and nothing from an index)."""
        args = ["--no-index"]
        for w in wheels:
            args += ["--find-links", str(w.parent)]
        return args

    def _from_wheelhouse(self, spec: WheelSpec) -> Path | None:
        if self.wheelhouse is None or spec.abi_major is not None or spec.version != self.version:
            return None
        pattern = f"{spec.dist.replace('-', '_')}-{spec.version}-*.whl"
        found = sorted(self.wheelhouse.glob(pattern))
        if not found:
            return None
        out = self.root / "wheels" / spec.key
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy2(found[-1], out)
        return out / found[-1].name

    def _stage(self, spec: WheelSpec) -> Path:
        """A tree shaped like the repository in which only packages/<dist>/ is a real copy (its
        pyproject.toml rewritten for ``spec``): CMake finds src/ and cmake/ at ../.. as usual."""
        stage = self.root / "stage" / spec.key
        if stage.exists():
            shutil.rmtree(stage)
        (stage / "packages").mkdir(parents=True)
        for entry in REPO.iterdir():
            if entry.name not in ("packages", ".git", ".nox", "dist"):
                (stage / entry.name).symlink_to(entry)
        for entry in (REPO / "packages").iterdir():
            if entry.name == spec.dist:
                shutil.copytree(
                    entry, stage / "packages" / entry.name, ignore=shutil.ignore_patterns("build")
                )
            elif entry.is_dir():
                (stage / "packages" / entry.name).symlink_to(entry)
            else:  # release_train.py resolves its own location: a copy reads the staged packages
                shutil.copy2(entry, stage / "packages" / entry.name)
        pyproject = stage / "packages" / spec.dist / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        text = re.sub(r'(?m)^version = "[^"]*"', f'version = "{spec.version}"', text, count=1)
        if spec.dist != CORE:  # the backend's release line needs the core of the same line
            text = re.sub(r'"tvm-runtime(>=|==|~=)[^"\[]*"', f'"tvm-runtime{core_range(spec.version)}"', text)
        pyproject.write_text(text, encoding="utf-8")
        return stage / "packages" / spec.dist

    def _build(self, spec: WheelSpec) -> Path:
        for tool in ("scikit_build_core", "tvm_ffi"):
            if not _importable(tool):
                pytest.skip(f"building test wheels needs {tool} in this venv (nox -s tests installs it)")
        source = self._stage(spec)
        out = self.root / "wheels" / spec.key
        # What these wheels prove is packaging and version checks, not code generation: no
        # optimisation, sources in unity batches (minutes less of the suite per wheel).
        settings = ["cmake.build-type=None", "cmake.define.TVMRT_UNITY_BUILD=ON"]
        if spec.abi_major is not None:
            flag = f"-DTVM_RUNTIME_ABI_VERSION_MAJOR={spec.abi_major}"
            settings.append(f"cmake.define.CMAKE_CXX_FLAGS={flag}")
        cmd = pip_wheel_command(source, out, self.root / "build" / spec.key, *settings)
        env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2"))
        run(cmd, env=env)
        (wheel,) = out.glob("*.whl")
        return wheel


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# ------------------------------------------------------------------------------ environments


class BasePrefix:
    """A stand-alone Python prefix: the interpreter, the standard library symlinked, and its own
    site-packages holding apache-tvm-ffi, numpy and pip (like a conda base environment)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        base = Path(sys.base_prefix)
        lib = root / "lib" / version
        self.site = lib / "site-packages"
        self.site.mkdir(parents=True)
        (root / "bin").mkdir()
        # A copy, not a link: Python finds its prefix from where the executable really is.
        self.python = root / "bin" / version
        shutil.copy2(os.path.realpath(sys._base_executable), self.python)  # type: ignore[attr-defined]
        libpython = sysconfig.get_config_var("INSTSONAME")
        if libpython and (base / "lib" / libpython).exists():
            (root / "lib" / libpython).symlink_to(base / "lib" / libpython)
        for entry in (base / "lib" / version).iterdir():
            if entry.name != "site-packages":
                (lib / entry.name).symlink_to(entry)
        import importlib.metadata as md

        pins = [f"apache-tvm-ffi=={md.version('apache-tvm-ffi')}", f"numpy=={md.version('numpy')}", "pip"]
        proc = run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
                str(self.site),
                *pins,
            ],
            check=False,
        )
        if proc.returncode != 0:
            why = proc.stderr[-500:]
            pytest.skip(f"cannot install {' '.join(pins)} into a fresh prefix (no package index?): {why}")

    def venv(self, path: Path) -> Env:
        run([str(self.python), "-m", "venv", "--system-site-packages", "--without-pip", str(path)])
        return Env(path)


class Env:
    """A venv over the base prefix; pip is the base's (visible through system site-packages)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.python = path / "bin" / "python"

    def pip(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        full_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONUSERBASE")}
        full_env.update(env or {})
        return run(
            [str(self.python), "-m", "pip", "--disable-pip-version-check", "--no-cache-dir", *args],
            check=check,
            env=full_env,
            cwd="/",
        )

    def install(self, *wheels: Path, extra: tuple[str, ...] = ()) -> None:
        self.pip("install", "--quiet", "--no-deps", *extra, *map(str, wheels))

    def probe(self, *actions: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        """Run probe.py with ``actions`` (see there) and return its report."""
        full_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TVM_OPENCL_LIBRARY", "TVM_VULKAN_LIBRARY", "CONDA_PREFIX", "PYTHON"))
        }
        full_env["TVM_TEST_ARTIFACTS"] = str(ARTIFACTS)
        full_env.update(env or {})
        proc = run([str(self.python), str(PROBE), *actions], check=False, env=full_env, cwd="/")
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise AssertionError(f"probe crashed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        report = json.loads(lines[-1])
        report["stderr"] = proc.stderr
        return report

    def versions(self) -> dict[str, str]:
        return self.probe()["versions"]


# ----------------------------------------------------------------------------- session state

_STATE: dict[str, Any] = {}
_STATE_LOCK = threading.Lock()


def session_root(factory: pytest.TempPathFactory) -> Path:
    with _STATE_LOCK:
        if "root" not in _STATE:
            _STATE["root"] = factory.mktemp("release")
        return _STATE["root"]


def train(factory: pytest.TempPathFactory) -> Train:
    root = session_root(factory)
    with _STATE_LOCK:
        if "train" not in _STATE:
            _STATE["train"] = Train(root)
        return _STATE["train"]


def base_prefix(factory: pytest.TempPathFactory) -> BasePrefix:
    root = session_root(factory)
    with _STATE_LOCK:
        if "prefix" not in _STATE:
            _STATE["prefix"] = BasePrefix(root / "base-prefix")
        return _STATE["prefix"]


def new_env(factory: pytest.TempPathFactory, name: str) -> Env:
    prefix = base_prefix(factory)
    path = session_root(factory) / "envs" / name
    path.parent.mkdir(exist_ok=True)
    return prefix.venv(path)


# ----------------------------------------------------------------------------------- devices


def require_ran(report: dict[str, Any], action: str) -> str:
    """The result of ``action`` in a probe report; a skip when its device is absent on this
    machine (a failure where CI sets TVM_TEST_REQUIRE_<API>=1), as the backend tests do."""
    result = report["results"][action]
    if result.startswith("absent:"):
        api = action.split(":")[-1]
        require = f"TVM_TEST_REQUIRE_{api.upper()}"
        if os.environ.get(require) == "1":
            pytest.fail(f"{require}=1 but no {api} device: {result}")
        pytest.skip(f"no {api} device: {result}")
    return result
