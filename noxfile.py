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

APACHE_TVM = "apache-tvm==0.27.0.post1"
ATHERIS = "atheris>=2.3,<4"  # coverage-guided fuzzing of Python code (fuzz/fuzz_rpc_packet.py)
# What apache-tvm's own RPC server and tracker import beyond its declared dependencies.
APACHE_RPC_EXTRAS = ["cloudpickle", "psutil", "tornado"]
# The distributions, their build order and what auditwheel must never graft all come from the
# packages' own declarations ([tool.tvm-runtime] in packages/*/pyproject.toml).
sys.path.insert(0, str(ROOT / "packages"))
sys.path.insert(0, str(ROOT / "ci" / "toolchain"))
import pins  # noqa: E402  (ci/toolchain/pins.toml: the one version of every build and lint tool)
import release_train  # noqa: E402

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
TEST_DEPS = ["pytest", "pytest-xdist", "numpy", *BUILD_TOOLS, "cibuildwheel", "check-jsonschema", "pyyaml"]
# What `tvm-runtime-cuda[nvrtc]` pulls in, installed from the index before our wheels (which
# come --no-index) so the CUDA tests compile real artifacts with NVRTC even without a GPU.
NVRTC_DEPS = ["nvidia-cuda-nvrtc>=13.3,<14", "cuda-pathfinder>=1.9,<2"]
# The `nvrtc-cu12` extra (CUDA 12 drivers), so its compile path is tested too.
NVRTC_CU12_DEPS = [
    "nvidia-cuda-nvrtc-cu12>=12.4,<13",
    "nvidia-cuda-runtime-cu12>=12.4,<13",
    "nvidia-cuda-cccl-cu12>=12.4,<13",
]
# The CPU machines here pin these two (a matching pair; PyPI's newest torch would be a CUDA build).
TORCHVISION = ["torch==2.14.1", "torchvision==0.29.1"]
# torch.distributed's gloo, the CPU collectives Disco's are measured against (the CPU build).
GLOO_TORCH = "torch==2.13.0"
# What `tvm-runtime-webgpu[wgpu]` pulls in (wgpu-native ships in the `wgpu` package), installed
# from the index before our wheels for the same reason.
WGPU_DEPS = ["wgpu>=0.32,<0.33"]


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
    session.install(TVM_FFI, "numpy")
    if extras in ("all", "cuda"):
        session.install(*NVRTC_DEPS)
    if extras in ("all", "webgpu"):
        session.install(*WGPU_DEPS)
    target = f"tvm[{extras}]" if extras else "tvm"
    # tvm-runtime-metal is released for macOS only, so tvm[all] will not pull it on Linux; the
    # Linux wheel exists to test it against the fake Metal (tests/metal), so install it here.
    metal = ["tvm-runtime-metal"] if extras == "all" else []
    session.install("--no-index", "--find-links", str(WHEELHOUSE), target, *metal)
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
    session.install(*TEST_DEPS, *NVRTC_CU12_DEPS, pins.requirement("ziglang"))
    _install_ours(session)
    header_dirs = _vendor_header_dirs(session)
    # `nox -s tests -- tests/vm -x` runs those paths only; without a path, the whole suite.
    named_paths = any(
        (ROOT / a).exists() or Path(a).exists() for a in session.posargs if not a.startswith("-")
    )
    # One pytest worker per CPU (TVM_TEST_WORKERS=N to choose, 1 for none): much of the suite
    # waits on child processes, and tests/conftest.py keeps what shares a fixture on one worker.
    workers = os.environ.get("TVM_TEST_WORKERS", "auto")
    parallel = [] if workers == "1" else ["-n", workers, "--dist", "loadgroup"]
    session.run(
        "python",
        "-m",
        "pytest",
        *([] if named_paths else [str(ROOT / "tests")]),
        *parallel,
        *session.posargs,
        # PoCL is installed above and NVRTC comes from pip, so their tests must run, never skip.
        env={
            "TVM_WHEELHOUSE": str(WHEELHOUSE),
            "TVM_REPO_ROOT": str(ROOT),
            "TVM_TEST_REQUIRE_OPENCL": "1",
            "TVM_TEST_REQUIRE_NVRTC": "1",
            # lavapipe + the `wgpu` package's wgpu-native: the WebGPU tests must run too.
            "TVM_TEST_REQUIRE_WEBGPU": "1",
            # Debian's libdnnl2 (oneDNN 2.x) is installed above: the dnnl_json tests must run.
            "TVM_TEST_REQUIRE_DNNL": "1",
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
    session.install(TVM_FFI, "numpy", "pytest", *NVRTC_DEPS)
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

    `nox -s bench` runs them all; `nox -s bench -- extra rpc` only those named (core, vm, load, llm, rpc,
    extra, disco, firstcall, byoc, profile, and each backend that has benchmarks/<name>_bench.py).
    """
    device_benches = [
        b.name for b in release_train.backends() if b.role == "backend" and b.name not in ("extra",)
    ]
    known = [
        "core",
        "vm",
        "load",
        "llm",
        "tensor_cache",
        "rpc",
        "extra",
        "disco",
        "firstcall",
        "byoc",
        "profile",
        *device_benches,
    ]
    wanted = list(session.posargs) or known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        session.error(f"unknown benchmarks {unknown}; known: {known}")
    _install_system_deps(session)
    _build_wheels(session)
    RESULTS.mkdir(exist_ok=True)
    bench_dir = ROOT / "benchmarks"
    ours = _venv_python(session, "ours", TVM_FFI, "numpy", wheelhouse=["tvm"])
    apache = _venv_python(session, "apache", APACHE_TVM, "numpy", *APACHE_RPC_EXTRAS)

    def outputs(name: str) -> list[str]:
        return ["--out", str(RESULTS / f"{name}_bench.json"), "--markdown", str(RESULTS / f"{name}_bench.md")]

    ours_all = None
    if any(name in wanted for name in ("core", "firstcall", "profile", *device_benches)):
        ours_all = _venv_python(
            session,
            "ours-all",
            TVM_FFI,
            "numpy",
            "pyopencl",
            *WGPU_DEPS,
            *NVRTC_DEPS,
            wheelhouse=["tvm[all]"],
        )
    if "core" in wanted:
        floor = _venv_python(session, "floor", TVM_FFI, "numpy")
        artifacts = ROOT / "tests" / "artifacts"
        session.run(
            "python",
            str(bench_dir / "core_bench.py"),
            *("--ours-python", ours, "--ours-backends-python", str(ours_all)),
            *("--floor-python", floor, "--apache-python", apache),
            *("--artifact", str(artifacts / "cpu" / "tiny_add.so")),
            *("--npz", str(artifacts / "cpu" / "tiny_add.npz")),
            *outputs("core"),
        )
    for name in device_benches:
        script = bench_dir / f"{name}_bench.py"
        if name in wanted and script.exists():
            session.run(
                str(ours_all), str(script), "--json", str(RESULTS / f"{name}_bench.json"), external=True
            )
    if "firstcall" in wanted:
        # Fresh processes per first call, cold and warm kernel caches, on PoCL and lavapipe.
        session.run(
            str(ours_all), str(bench_dir / "firstcall_bench.py"), *outputs("firstcall"), external=True
        )
    if "vm" in wanted:
        session.run(
            "python",
            str(bench_dir / "vm_bench.py"),
            "--ours-python",
            ours,
            "--apache-python",
            apache,
            *outputs("vm"),
        )
    if "load" in wanted:
        # Real torchvision models (random weights) compiled by apache-tvm 0.27, cached in
        # results/models: torch and torchvision live only in this generator venv.
        models = _venv_python(session, "models", APACHE_TVM, "numpy", *TORCHVISION)
        session.run(
            models,
            str(bench_dir / "make_torchvision_models.py"),
            "--out",
            str(RESULTS / "models"),
            external=True,
        )
        session.run(
            "python",
            str(bench_dir / "load_bench.py"),
            *("--ours-python", ours, "--apache-python", apache, "--models-dir", str(RESULTS / "models")),
            *outputs("load"),
        )
    if "profile" in wanted:
        # Runtime overhead (wall - kernel time) per model, with the VM profiler; the torchvision
        # models join when `load` (run first in a full `nox -s bench`) made them.
        session.run(
            str(ours_all),
            str(bench_dir / "profile_bench.py"),
            *("--json", str(RESULTS / "profile_bench.json"), "--markdown", str(RESULTS / "profile_bench.md")),
            *(["--models-dir", str(RESULTS / "models")] if (RESULTS / "models").is_dir() else []),
            external=True,
        )
    if "llm" in wanted:
        session.run(
            "python",
            str(bench_dir / "llm_bench.py"),
            *("--ours-python", ours, "--apache-python", apache),
            *outputs("llm"),
        )
    if "tensor_cache" in wanted:
        session.run(
            "python",
            str(bench_dir / "tensor_cache_bench.py"),
            *("--ours-python", ours, "--apache-python", apache),
            *outputs("tensor_cache"),
        )
    if "extra" in wanted:
        ours_extra = _venv_python(session, "ours-extra", TVM_FFI, "numpy", wheelhouse=["tvm[extra]"])
        session.run(
            "python",
            str(bench_dir / "extra_bench.py"),
            *("--ours-python", ours_extra, "--apache-python", apache),
            *outputs("extra"),
        )
    if "disco" in wanted:
        ours_extra = _venv_python(session, "ours-extra", TVM_FFI, "numpy", wheelhouse=["tvm[extra]"])
        gloo = _venv_python(session, "gloo", GLOO_TORCH, "numpy")
        session.run(
            "python",
            str(bench_dir / "disco_bench.py"),
            *("--ours-python", ours_extra, "--torch-python", gloo),
            *outputs("disco"),
        )
    if "byoc" in wanted:
        # The same models with and without the dnnl_json offload, built by apache-tvm 0.27.
        ours_dnnl = _venv_python(session, "ours-dnnl", TVM_FFI, "numpy", wheelhouse=["tvm[dnnl]"])
        models = RESULTS / "byoc_models"
        session.run(apache, str(bench_dir / "make_byoc_models.py"), "--out", str(models), external=True)
        session.run(
            "python",
            str(bench_dir / "byoc_bench.py"),
            *("--ours-python", ours_dnnl, "--apache-python", apache, "--models-dir", str(models)),
            *outputs("byoc"),
        )
    if "rpc" in wanted:
        session.run(
            "python",
            str(bench_dir / "rpc_bench.py"),
            "--ours-python",
            ours,
            "--apache-python",
            apache,
            *outputs("rpc"),
        )
        session.run(
            "python",
            str(bench_dir / "rpc_proxy_bench.py"),
            *("--ours-python", ours, "--apache-python", apache),
            *outputs("rpc_proxy"),
        )
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
    session.install(*TEST_DEPS, *NVRTC_DEPS, *NVRTC_CU12_DEPS, *WGPU_DEPS)
    _instrumented_install(session, "instrumented-sanitize")
    session.run(
        "python",
        str(ROOT / "ci" / "sanitized_tests.py"),
        *("--work", str(DIST / "sanitize"), "--report", str(RESULTS / "sanitize.md")),
        *session.posargs,
    )
    _publish_report(session, "sanitize")
