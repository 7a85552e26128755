"""Build apache-tvm's compiler from source with the external codegens PyPI's build leaves out.

Fixture tooling, not part of the runtime or of ``nox -s tests``: the ``byoc-fixtures`` nox
session runs it once, then runs ``generate_byoc_compiled.py`` with the compiler it made.  The
build is cached outside the repository (``$TVM_SOURCE_COMPILER_CACHE``, default
``~/.cache/tvm-runtime/apache-tvm-<commit>``) and ninja makes every later run incremental.

Why a source build: apache-tvm 0.27's PyPI wheel has no ``relax.ext.*`` codegens, so it cannot
emit ``dnnl_json`` modules; its ``libtvm_compiler.so`` hides everything an add-on codegen would
link against.  What is built (pins below, nothing here is committed to the repository):

* apache/tvm at ``TVM_COMMIT`` (main on 2026-08-22, version 0.27.0-dev: the newest commit that
  can be fetched here; the 0.27.0 release commit is not reachable without GitHub), with its
  tvm-ffi submodule taken from the apache-tvm-ffi sdist of the pinned version (the sdist carries
  dlpack and libbacktrace, which ``git archive`` of the submodule would not);
* ``USE_LLVM`` (Debian's llvm-15: TVM needs LLVM >= 15 for host code), ``USE_DNNL=ON`` (the
  ``relax.ext.dnnl`` codegen and, since the codegen asks for ``runtime.DNNLJSONRuntimeCreate``
  to make its modules, the DNNL JSON runtime over Debian's oneDNN); everything else off;
* ``-O0``: the compiler only has to build small models, and the build has to fit on two cores.

Usage::

    python tests/artifacts/compiler/build_apache_tvm.py --tvm-git <apache/tvm git dir or URL>

It prints the path of a ``python`` wrapper that runs the built compiler (``import tvm``), after
the path of the cuBLAS/cuDNN codegen add-on (``libtvm_cuda_codegens.so``, see
``build_cuda_codegen_addon``), which a generator loads with ``ctypes`` after ``import tvm``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import venv
from pathlib import Path

TVM_COMMIT = "5d4dc8721307cf9677becacf0395c19be130e206"
TVM_GIT_URL = "https://github.com/apache/tvm.git"
FFI_VERSION = "0.1.13.post2"  # the tvm-ffi submodule of TVM_COMMIT (v0.1.13-post2, 12dbf053)
FFI_SDIST = (
    "https://files.pythonhosted.org/packages/37/da/"
    "e9eb9fb70667db3d1ab5499ae29abd496c480f2081dbcdf377aa612c9655/"
    "apache_tvm_ffi-0.1.13.post2.tar.gz"
)
FFI_SDIST_SHA256 = "7da4ede2392527c122afd36ac717d9a267627901881a38f5d66d214ff68f482e"
LLVM_CONFIG = "llvm-config-15"
APT_PACKAGES = ("llvm-15-dev", "libdnnl-dev", "ninja-build", "cmake", "git")
PYTHON_DEPS = (f"apache-tvm-ffi=={FFI_VERSION}", "numpy", "ml_dtypes", "typing_extensions", "psutil")
# Headers and libraries of cuBLAS/cuDNN for the add-on (the CUDA runtime comes from the toolkit).
CUDA_WHEELS = ("nvidia-cublas==13.10.0.20", "nvidia-cudnn-cu13==9.28.1.4")
CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))

# The cuBLAS and cuDNN codegens and the JSON runtimes they create their modules with, built
# beside the compiler instead of in it: TVM's CMake builds them only with USE_CUDA, which needs
# libcuda at link time and turns on CUDA include paths for every source (a full rebuild).
# Making an artifact needs no GPU: the runtimes are only constructed and serialized.
ADDON_SOURCES = (
    "src/relax/backend/contrib/cublas/codegen.cc",
    "src/relax/backend/contrib/cudnn/codegen.cc",
    "src/runtime/extra/contrib/cublas/cublas_json_runtime.cc",
    "src/runtime/extra/contrib/cublas/cublas_utils.cc",
    "src/runtime/extra/contrib/cublas/cublas.cc",
    "src/runtime/extra/contrib/cudnn/cudnn_json_runtime.cc",
    "src/runtime/extra/contrib/cudnn/cudnn_utils.cc",
    "src/runtime/extra/contrib/cudnn/conv_forward.cc",
)

CMAKE_OPTIONS = {
    "USE_LLVM": LLVM_CONFIG,
    "USE_DNNL": "ON",
    "USE_RPC": "OFF",
    "USE_GTEST": "OFF",
    "USE_CCACHE": "OFF",
    # Default visibility: the cuBLAS/cuDNN codegens are built beside the compiler as an add-on
    # (build_codegen_addon.py) and link against its internals.
    "HIDE_PRIVATE_SYMBOLS": "OFF",
    "USE_LIBBACKTRACE": "OFF",
    "TVM_FFI_USE_LIBBACKTRACE": "OFF",
    "TVM_FFI_BACKTRACE_ON_SEGFAULT": "OFF",
    "CMAKE_BUILD_TYPE": "Release",
    # The release flags come last on the command line (after TVM's own -O2), so they decide.
    "CMAKE_CXX_FLAGS_RELEASE": "-O0 -DNDEBUG",
    "CMAKE_C_FLAGS_RELEASE": "-O0 -DNDEBUG",
}


def default_cache() -> Path:
    env = os.environ.get("TVM_SOURCE_COMPILER_CACHE")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "tvm-runtime" / f"apache-tvm-{TVM_COMMIT[:12]}"


def run(*cmd: str | Path, cwd: Path | None = None, env: dict | None = None) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, check=True)


def ensure_system_packages() -> None:
    if shutil.which(LLVM_CONFIG) and Path("/usr/include/dnnl.hpp").exists() and shutil.which("ninja"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        sys.exit(f"install {' '.join(APT_PACKAGES)} (Debian names) and rerun")
    run("apt-get", "update", "-q")
    run("apt-get", "install", "-y", "-q", *APT_PACKAGES)


def fetch_tvm_source(tvm_git: str, src: Path) -> None:
    """Unpack TVM_COMMIT into ``src`` from a local git directory or a clone of ``tvm_git``."""
    git_dir = Path(tvm_git)
    if not git_dir.exists():
        clone = src.parent / "tvm.git"
        if not clone.exists():
            run("git", "clone", "--bare", "--filter=blob:none", tvm_git, clone)
        git_dir = clone
    tmp = src.with_suffix(".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", TVM_COMMIT],
        check=True,
        capture_output=True,
    ).stdout
    tar_path = tmp / "tvm.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(tmp, filter="data")
    tar_path.unlink()
    ffi_dir = tmp / "3rdparty" / "tvm-ffi"
    shutil.rmtree(ffi_dir, ignore_errors=True)
    sdist = fetch_ffi_sdist(src.parent)
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "3rdparty", filter="data")
    (tmp / "3rdparty" / f"apache_tvm_ffi-{FFI_VERSION}").rename(ffi_dir)
    tmp.rename(src)


def fetch_ffi_sdist(cache: Path) -> Path:
    path = cache / Path(FFI_SDIST).name
    if not path.exists():
        print(f"downloading {FFI_SDIST}", flush=True)
        with urllib.request.urlopen(FFI_SDIST) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != FFI_SDIST_SHA256:
            sys.exit(f"{path.name}: sha256 mismatch")
        path.write_bytes(data)
    return path


def ensure_venv(cache: Path) -> Path:
    python = cache / "venv" / "bin" / "python"
    if not python.exists():
        venv.create(cache / "venv", with_pip=True)
        run(python, "-m", "pip", "install", "-q", *PYTHON_DEPS)
    return python


def build(src: Path, build_dir: Path, jobs: int) -> None:
    if not (build_dir / "build.ninja").exists():
        build_dir.mkdir(parents=True, exist_ok=True)
        defines = [f"-D{k}={v}" for k, v in CMAKE_OPTIONS.items()]
        run("cmake", "-G", "Ninja", "-S", src, "-B", build_dir, *defines)
    run("ninja", "-C", build_dir, f"-j{jobs}", "tvm_compiler", "tvm_runtime", "tvm_runtime_extra")


def build_cuda_codegen_addon(src: Path, build_dir: Path, python: Path, jobs: int) -> Path:
    """``libtvm_cuda_codegens.so``: ``relax.ext.cublas``/``relax.ext.cudnn`` and
    ``runtime.CublasJSONRuntimeCreate``/``runtime.cuDNNJSONRuntimeCreate``, loaded by the
    generator after ``import tvm``."""
    if not (CUDA_HOME / "include" / "cuda_runtime.h").exists() or not (CUDA_HOME / "lib64").is_dir():
        sys.exit(
            f"the cuBLAS/cuDNN codegen add-on needs the CUDA toolkit (headers, libcudart) at "
            f"{CUDA_HOME}: set CUDA_HOME"
        )
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    nvidia = site / "nvidia"
    if not (nvidia / "cudnn" / "include" / "cudnn.h").exists():
        run(python, "-m", "pip", "install", "-q", "--no-deps", *CUDA_WHEELS)
    ffi = src / "3rdparty" / "tvm-ffi"
    includes = [
        src / "include",
        ffi / "include",
        ffi / "3rdparty" / "dlpack" / "include",
        src / "3rdparty" / "compiler-rt",
        CUDA_HOME / "include",
        nvidia / "cu13" / "include",
        nvidia / "cudnn" / "include",
    ]
    # As TVM's CMake compiles its own sources (see build.ninja).
    flags = ["-std=gnu++20", "-O0", "-fPIC", "-DNDEBUG=1", "-DTVM_FFI_CMAKE_LITTLE_ENDIAN=1"]
    flags += ["-DTVM_INDEX_DEFAULT_I64=1", "-DUSE_JSON_RUNTIME=1"]
    flags += [f"-I{i}" for i in includes]
    obj_dir = build_dir / "cuda_codegens"
    obj_dir.mkdir(exist_ok=True)
    procs, objects = [], []
    for source in ADDON_SOURCES:
        obj = obj_dir / (source.replace("/", "_") + ".o")
        objects.append(obj)
        if obj.exists() and obj.stat().st_mtime > (src / source).stat().st_mtime:
            continue
        while len(procs) >= jobs:
            procs.pop(0).wait()
        print("+ g++ -c", source, flush=True)
        procs.append(subprocess.Popen(["g++", *flags, "-c", str(src / source), "-o", str(obj)]))
    for p in procs:
        if p.wait() != 0:
            sys.exit("building the cuBLAS/cuDNN codegen add-on failed")
    out = build_dir / "lib" / "libtvm_cuda_codegens.so"
    libs = [
        (build_dir / "lib", ("tvm_compiler", "tvm_runtime")),
        (nvidia / "cu13" / "lib", (":libcublas.so.13", ":libcublasLt.so.13")),
        (nvidia / "cudnn" / "lib", (":libcudnn.so.9",)),
        (CUDA_HOME / "lib64", ("cudart",)),
    ]
    link = ["g++", "-shared", "-o", str(out), *map(str, objects)]
    for directory, names in libs:
        link += [f"-L{directory}", f"-Wl,-rpath,{directory}", *(f"-l{n}" for n in names)]
    link += [f"-L{build_dir / 'lib'}", "-ltvm_ffi", "-Wl,--no-undefined"]
    run(*link)
    return out


def write_wrapper(cache: Path, src: Path, build_dir: Path, python: Path) -> Path:
    """A ``python`` that imports the source tree's ``tvm`` with the libraries just built."""
    wrapper = cache / "python"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'export PYTHONPATH="{src / "python"}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
        f'export TVM_LIBRARY_PATH="{build_dir / "lib"}"\n'
        f'exec "{python}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tvm-git", default=os.environ.get("TVM_GIT", TVM_GIT_URL))
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--run", type=Path, help="then run this script with the built compiler")
    args = parser.parse_args()

    cache: Path = args.cache
    cache.mkdir(parents=True, exist_ok=True)
    ensure_system_packages()
    src = cache / "src"
    if not src.exists():
        fetch_tvm_source(args.tvm_git, src)
    python = ensure_venv(cache)
    build_dir = cache / "build"
    build(src, build_dir, args.jobs)
    addon = build_cuda_codegen_addon(src, build_dir, python, args.jobs)
    wrapper = write_wrapper(cache, src, build_dir, python)
    run(wrapper, "-c", "import tvm; assert tvm.get_global_func('relax.ext.dnnl', True)")
    print(addon)
    print(wrapper)
    if args.run:
        run(wrapper, args.run, "--cuda-codegens", addon)


if __name__ == "__main__":
    main()
