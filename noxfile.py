"""Every developer and CI workflow of tvm-runtime.

    nox -s build   build all wheels into dist/wheelhouse (auditwheel-repaired, checked)
    nox -s tests   build, install into a fresh venv from the wheelhouse, pip check, pytest
    nox -s demo    build, install, run a TVM-compiled artifact on every available device
    nox -s bench   benchmarks against tvm_ffi, apache-tvm 0.27 and pyopencl -> results/
    nox -s lint    ruff + clang-format + mypy (the wheels' Python)
    nox -s docs    the docs site (mkdocs, strict, internal link and anchor check) -> dist/docs
    nox -s aarch64 cross-build the aarch64 wheels and smoke-test them under qemu
    nox -s macos   cross-build the macOS arm64 wheels into dist/wheelhouse-macos, checked statically
    nox -s fuzz    coverage-guided fuzzing of every parser of untrusted bytes -> results/fuzz.md
    nox -s sanitize the test suite over an ASan + UBSan build -> results/sanitize.md
    nox -s stress  many-thread stress of every device, bounded: `nox -s stress -- 120` -> results/stress.md
    nox -s gpu-check  the prepared GPU check: fill .gpu-carry (wheels, loaders, apache-tvm runtime-only)
                   and run ci/gpu_check/run.py here on the fake CUDA driver (`-- --fake`, the default)
                   -> results/gpu-check/summary.md; on a GPU machine run that script directly
    nox -s byoc-fixtures  apache-tvm built from source with its DNNL/cuBLAS/cuDNN codegens (cached
                   outside the repo) regenerates tests/artifacts/byoc_compiled

Set TVM_REUSE_WHEELHOUSE=1 to skip rebuilding when dist/wheelhouse is already complete.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = False
nox.options.sessions = ["lint", "docs", "aarch64", "tests"]

ROOT = Path(__file__).resolve().parent
DIST = ROOT / "dist"
WHEELHOUSE = DIST / "wheelhouse"
RESULTS = ROOT / "results"

ATHERIS = "atheris>=2.3,<4"  # coverage-guided fuzzing of Python code (fuzz/fuzz_rpc_packet.py)
# The distributions, their build order and what auditwheel must never graft all come from the
# packages' own declarations ([tool.tvm-runtime] in packages/*/pyproject.toml).
sys.path.insert(0, str(ROOT / "packages"))
sys.path.insert(0, str(ROOT / "ci" / "toolchain"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_table  # noqa: E402  (benchmarks/bench_table.py: every benchmark and its venvs)
import pins  # noqa: E402  (ci/toolchain/pins.toml: the one version of every build and lint tool)
import release_train  # noqa: E402

# The compiler of every artifact the runtime runs (fixtures, benchmarks, the aarch64 smoke test).
APACHE_TVM = bench_table.APACHE_TVM

# The tested range of apache-tvm-ffi, declared once in the core's [tool.tvm-runtime].
TVM_FFI = release_train.tvm_ffi_requirement()
# ci/build_wheels.py builds with zig's clang for glibc 2.28 (x86_64 and aarch64 from this host).
BUILD_TOOLS = [*pins.group("build"), TVM_FFI]
LINT_TOOLS = pins.group("lint")
DOCS_TOOLS = pins.group("docs")
CHART_TOOLS = pins.group("charts")
# The tests build the template backend (scikit-build-core, cmake, ninja) and fixture DSOs (zig)
# and check wheels against auditwheel's manylinux policy, with the pinned build tools even when
# the wheelhouse is reused; cibuildwheel, check-jsonschema and pyyaml validate the release
# configuration under ci/.
TEST_DEPS = [
    "pytest",
    "pytest-xdist",
    "pytest-timeout",
    "numpy",
    *BUILD_TOOLS,
    "cibuildwheel",
    "check-jsonschema",
    "pyyaml",
]
# What each backend needs from the package index beside our wheels (NVRTC for the CUDA tests'
# compile path without a GPU, the `wgpu` package's wgpu-native, ...), the test-only extras and
# what CI machines provide for real (TVM_TEST_REQUIRE_*) come from the packages' declarations.


def _install_system_deps(session: nox.Session, *extra: str) -> None:
    session.run("bash", str(ROOT / "ci" / "install-system-deps.sh"), *extra, external=True)


def _wheelhouse_complete() -> bool:
    names = {p.name.split("-")[0] for p in WHEELHOUSE.glob("*.whl")}
    here = f"linux-{platform.machine()}"
    built = {p.distribution.replace("-", "_") for p in release_train.packages() if p.built_on(here)}
    return built <= names


def _build_wheels(
    session: nox.Session, arch: str | None = None, out: Path = WHEELHOUSE, system: str = "linux"
) -> None:
    """Wheels of every package built for the platform (zig toolchain, ci/build_wheels.py), checked:
    manylinux_2_28 by default, macosx_11_0_arm64 with system="macos"."""
    if os.environ.get("TVM_REUSE_WHEELHOUSE") == "1" and out == WHEELHOUSE and _wheelhouse_complete():
        session.log(f"reusing {WHEELHOUSE}")
        return
    if system == "linux":
        # Build-time headers from Debian (libdnnl-dev for tvm-runtime-dnnl): every session that
        # builds gets them here, so `nox -s build` works on a fresh machine like `tests` does.
        _install_system_deps(session)
    session.install(*BUILD_TOOLS)
    cmd = ["python", str(ROOT / "ci" / "build_wheels.py"), "--out", str(out), "--platform", system]
    session.run(*cmd, *(["--arch", arch] if arch else []))


def _install_ours(session: nox.Session, extras: str = "all") -> None:
    """Third-party deps from the index first, then our wheels strictly from the wheelhouse.

    PyPI has an unrelated `tvm` project, so our own names must never be resolved from the index.
    """
    session.install(TVM_FFI, "numpy", *(release_train.index_requirements(extras) if extras else []))
    target = f"tvm[{extras}]" if extras else "tvm"
    # A backend built here for the tests only (tvm-runtime-metal against the fake Metal on Linux)
    # is not pulled by tvm[all]: install it by name.
    here = f"linux-{platform.machine()}"
    test_only = [p.distribution for p in release_train.test_only_on(here)] if extras == "all" else []
    session.install("--no-index", "--find-links", str(WHEELHOUSE), target, *test_only)
    session.run("python", "-m", "pip", "check")


@nox.session
def build(session: nox.Session) -> None:
    """Build every wheel into dist/wheelhouse."""
    _build_wheels(session)


@nox.session
def aarch64(session: nox.Session) -> None:
    """Cross-build the aarch64 wheels (dist/wheelhouse-aarch64) and smoke-test them under qemu:
    `python -m tvm.backend`, a CPU kernel and an OpenCL kernel on PoCL, all emulated."""
    _install_system_deps(session, "qemu-user-static")
    out = DIST / "wheelhouse-aarch64"
    _build_wheels(session, arch="aarch64", out=out)
    # The smoke artifacts are compiled for aarch64 by apache-tvm 0.27, in its own venv.
    compiler = _venv_python(session, "apache-aarch64", APACHE_TVM, "numpy")
    smoke = ROOT / "ci" / "toolchain" / "smoke_aarch64.py"
    work = DIST / "aarch64-smoke"
    session.run("python", str(smoke), "--wheelhouse", str(out), "--tvm-python", compiler, "--work", str(work))


@nox.session
def macos(session: nox.Session) -> None:
    """Cross-build the macOS arm64 wheels (dist/wheelhouse-macos) on Linux and check every Mach-O
    file statically (ci/check_macos_wheels.py); nothing runs them here: release.yml's macOS job
    does, on a Mac."""
    _build_wheels(session, arch="arm64", out=DIST / "wheelhouse-macos", system="macos")


@nox.session
def tests(session: nox.Session) -> None:
    """Build the wheels, install them into a fresh venv and run the test suite."""
    _install_system_deps(session)
    _build_wheels(session)
    # ziglang too (also when the wheelhouse is reused): tests/packaging links Mach-O fixtures.
    session.install(*TEST_DEPS, *release_train.test_requirements(), pins.requirement("ziglang"))
    _install_ours(session)
    header_dirs = _vendor_header_dirs(session)
    # `nox -s tests -- tests/vm -x` runs those paths only; without a path, the whole suite.
    named_paths = any(
        (ROOT / a).exists() or Path(a).exists() for a in session.posargs if not a.startswith("-")
    )
    # One pytest worker per CPU (TVM_TEST_WORKERS=N to choose, 1 for none): much of the suite
    # waits on child processes, and tests/conftest.py keeps what shares a fixture on one worker.
    workers = os.environ.get("TVM_TEST_WORKERS", "auto")
    parallel = [] if workers == "1" else ["-n", workers, "--dist", "loadscope"]
    # A hung test fails after this long, with every thread's stack, instead of holding CI until
    # its time limit (the slowest test, fixture setup included, takes under a minute in CI).
    # The thread method ends the worker; tests/conftest.py's scheduler reports that test failed
    # and runs the rest.
    hang_limit = ["--timeout", os.environ.get("TVM_TEST_TIMEOUT", "900"), "-o", "timeout_method=thread"]
    session.run(
        "python",
        "-m",
        "pytest",
        *([] if named_paths else [str(ROOT / "tests")]),
        *parallel,
        *hang_limit,
        "--durations=20",
        *session.posargs,
        # PoCL, lavapipe + wgpu-native, oneDNN (installed above) and NVRTC (from pip) are here on
        # purpose: their tests must run, never skip (test-require of the declarations).
        env={
            "TVM_WHEELHOUSE": str(WHEELHOUSE),
            "TVM_REPO_ROOT": str(ROOT),
            **dict.fromkeys(release_train.test_require(), "1"),
            # Every skip must be something this machine lacks, within tests/skip_budget.json.
            "TVM_TEST_SKIP_AUDIT": "1",
            # cublasLt.h, cudnn.h, nccl.h and the CUDA headers they include, for the checks of our
            # own declarations (tests/cuda/test_vendor_api_decls.py).
            "TVM_VENDOR_HEADER_DIRS": os.pathsep.join(header_dirs),
        },
    )


def _publish_report(session: nox.Session, name: str) -> None:
    """Copy results/<name>.md, stamped, into docs/data/reliability for the reliability page."""
    session.run("python", str(ROOT / "docs" / "gen_reports.py"), name, "--results", str(RESULTS))


def _vendor_header_dirs(session: nox.Session) -> list[str]:
    """The include/ directories of NVIDIA's library wheels, unpacked once into a cache outside
    the repository by ci/vendor_headers.py (the first run downloads the wheels, ~1 GB, once;
    later ones reuse the cache in well under a second)."""
    out = session.run("python", str(ROOT / "ci" / "vendor_headers.py"), silent=True)
    return [line for line in (out or "").splitlines() if line.startswith(os.sep)]


@nox.session
def stress(session: nox.Session) -> None:
    """Concurrency stress, not in the default sessions: `nox -s stress -- 120` runs about 120 s of
    many-thread scenarios on every available device and writes results/stress.md (and .json)."""
    seconds = session.posargs[0] if session.posargs else "120"
    _install_system_deps(session)
    _build_wheels(session)
    _install_ours(session)
    RESULTS.mkdir(exist_ok=True)
    session.run(
        "python",
        str(ROOT / "tests" / "faults" / "stress.py"),
        *("--seconds", seconds, "--out", str(RESULTS / "stress.md"), "--json", str(RESULTS / "stress.json")),
        env={"TVM_REPO_ROOT": str(ROOT)},
    )
    _publish_report(session, "stress")


@nox.session(name="gpu-check")
def gpu_check(session: nox.Session) -> None:
    """Prepare the offline GPU check's carry folder and prove the check here on the fake driver.

    On the lent GPU machine (no network) the same check is one command over the carried folder:
    `python3 ci/gpu_check/run.py --carry .gpu-carry --out "$OUT"` (docs/gpu-check.md)."""
    _install_system_deps(session)
    _build_wheels(session)
    session.install(TVM_FFI, "numpy", "pytest", *release_train.index_requirements("cuda"))
    carry = ROOT / ".gpu-carry"
    session.run(
        "python",
        str(ROOT / "ci" / "gpu_check" / "prepare.py"),
        "--wheelhouse",
        str(WHEELHOUSE),
        "--carry",
        str(carry),
    )
    args = session.posargs or ["--fake"]
    out = RESULTS / "gpu-check"
    session.run(
        "python", str(ROOT / "ci" / "gpu_check" / "run.py"), "--carry", str(carry), "--out", str(out), *args
    )


@nox.session(name="byoc-fixtures", venv_backend="none")
def byoc_fixtures(session: nox.Session) -> None:
    """Not in the default sessions (the first build takes about an hour on 2 cores; later runs
    are incremental): build apache-tvm from source with its external codegens, cached under
    $TVM_SOURCE_COMPILER_CACHE (default ~/.cache/tvm-runtime), then regenerate
    tests/artifacts/byoc_compiled with it. `-- --tvm-git DIR` takes apache/tvm from a local git
    directory instead of GitHub."""
    compiler = ROOT / "tests" / "artifacts" / "compiler" / "build_apache_tvm.py"
    generator = ROOT / "tests" / "artifacts" / "generate_byoc_compiled.py"
    session.run(sys.executable, str(compiler), *session.posargs, "--run", str(generator), external=True)


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: build, install into a fresh venv, run artifacts on every device, show backends."""
    _install_system_deps(session)
    _build_wheels(session)
    _install_ours(session)
    session.chdir(str(ROOT))
    # Mesa's Vulkan WSI complains on every device open when a headless machine has no runtime
    # dir (harmless, but it reads like a failure in the demo's output).
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime_dir:
        runtime_dir = os.path.abspath(session.create_tmp())
        os.chmod(runtime_dir, 0o700)  # Mesa accepts only a private one
    env = {"XDG_RUNTIME_DIR": runtime_dir}
    # Each artifact in two fresh processes over initially empty kernel caches: cold and warm.
    session.run("python", "examples/run_everywhere.py", "--cold-and-warm", env=env)
    session.run("python", "-m", "tvm.backend", env=env)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format check), mypy on the wheels' Python, clang-format on the C++ sources."""
    # mypy reads numpy's and tvm-ffi's own annotations, so both are installed beside it.
    session.install(*LINT_TOOLS, TVM_FFI, "numpy")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")  # [tool.mypy] in pyproject.toml: every packages/*/python/tvm
    # The extras of tvm-runtime and tvm are generated from the declarations: never stale.
    session.run("python", str(ROOT / "packages" / "release_train.py"), "check")
    sources = [str(p) for p in (ROOT / "src").rglob("*") if p.suffix in {".h", ".cc"}]
    sources += [str(p) for p in (ROOT / "examples").rglob("*.cc")]
    sources += [str(p) for p in (ROOT / "fuzz").glob("*") if p.suffix in {".h", ".cc", ".c"}]
    session.run("clang-format", "--dry-run", "--Werror", *sources)


@nox.session
def docs(session: nox.Session) -> None:
    """The docs site into dist/docs: strict (any warning fails), with the internal link check.

    MkDocs checks every relative link and #anchor between pages (mkdocs.yml `validation`);
    ci/check_doc_links.py checks the README's and the wheels' READMEs' links into docs/.
    External links are not checked: the machines that build this reach no network but PyPI.
    The API reference is read from the sources statically: no wheel is built or installed.
    """
    session.install(*DOCS_TOOLS)
    session.run("python", "ci/check_doc_links.py")
    session.run("mkdocs", "build", "--strict", "--clean", env={"NO_MKDOCS_2_WARNING": "1"})


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
    """Benchmarks (not tests): results/*.json and results/*.md, then docs/data/perf (docs/gen_perf.py).

    `nox -s bench` runs every row of benchmarks/bench_table.py; `nox -s bench -- extra rpc` only
    those named; `-- --quick` makes each a smoke run (a few rounds and blocks).
    """
    quick = "--quick" in session.posargs
    known = bench_table.names()
    wanted = [a for a in session.posargs if a != "--quick"] or known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        session.error(f"unknown benchmarks {unknown}; known: {known}")
    rows = [b for b in bench_table.benches() if b.name in wanted]
    _install_system_deps(session)
    _build_wheels(session)
    RESULTS.mkdir(exist_ok=True)
    declared = bench_table.venvs()
    pythons = {"": "python"}  # nox's own interpreter starts the children of ours-vs-peer rows
    for name in dict.fromkeys(v for row in rows for v in row.venvs):
        venv = declared[name]
        pythons[name] = _venv_python(session, name, *venv.requirements, wheelhouse=list(venv.wheels))
    for row in rows:
        for step in row.before:
            argv = [pythons[step.venv], str(ROOT / "benchmarks" / step.script)]
            session.run(*argv, *bench_table.expand(step.args, RESULTS, step.script), external=True)
        argv = bench_table.command(row, pythons, RESULTS)
        session.run(*argv, *(["--quick"] if quick else []), external=True)
    # The docs' performance page shows these runs: data files and ratio charts (matplotlib SVG)
    # under docs/data/perf, each stamped with this machine and date; commit them with the run.
    session.install(*CHART_TOOLS)
    session.run("python", str(ROOT / "docs" / "gen_perf.py"), "--results", str(RESULTS))


# Sanitizer builds use the host's clang (never shipped): Debian's clang and its runtimes.
SANITIZER_SYSTEM_DEPS = ["clang", "libclang-rt-14-dev", "llvm"]
INSTRUMENTED_BUILD_DEPS = [pins.requirement(tool) for tool in ("scikit-build-core", "ninja", "cmake")]
INSTRUMENTED_BUILD_DEPS += [TVM_FFI, "numpy", "pytest"]


def _instrumented_install(session: nox.Session, name: str, *flags: str) -> str:
    """Builds the core and every backend with ASan + UBSan into this session's venv; returns
    the venv's site-packages."""
    _install_system_deps(session, *SANITIZER_SYSTEM_DEPS)
    session.install(*INSTRUMENTED_BUILD_DEPS)
    session.run("python", str(ROOT / "ci" / "instrumented_build.py"), "--work", str(DIST / name), *flags)
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return session.run("python", "-c", code, silent=True).strip()


@nox.session
def fuzz(session: nox.Session) -> None:
    """Coverage-guided fuzzing (libFuzzer, ASan, UBSan; atheris for the Python RPC decoder) of
    every parser of untrusted bytes.

    `nox -s fuzz` runs each target 60 s; `nox -s fuzz -- 300` longer; `nox -s fuzz -- 30 params`
    only some targets.  Writes results/fuzz.md; corpora and findings stay in dist/fuzz.
    """
    seconds = session.posargs[0] if session.posargs else "60"
    targets = session.posargs[1:]
    session.install(ATHERIS)
    site = _instrumented_install(session, "instrumented-fuzz", "--fuzz")
    session.run(
        "python",
        str(ROOT / "fuzz" / "run_fuzz.py"),
        *("--site", site, "--work", str(DIST / "fuzz"), "--seconds", seconds),
        *(["--targets", *targets] if targets else []),
        *("--report", str(RESULTS / "fuzz.md")),
    )
    _publish_report(session, "fuzz")


@nox.session
def sanitize(session: nox.Session) -> None:
    """The test suite over an ASan + UBSan build of the core and every backend.

    Writes results/sanitize.md; `nox -s sanitize -- tests/vm tests/core` runs some tests only.
    """
    index = dict.fromkeys([*release_train.index_requirements("all"), *release_train.test_requirements()])
    session.install(*TEST_DEPS, *index)
    _instrumented_install(session, "instrumented-sanitize")
    session.run(
        "python",
        str(ROOT / "ci" / "sanitized_tests.py"),
        *("--work", str(DIST / "sanitize"), "--report", str(RESULTS / "sanitize.md")),
        *session.posargs,
    )
    _publish_report(session, "sanitize")
