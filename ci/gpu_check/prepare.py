"""Fill the carry folder of the prepared GPU check (ci/gpu_check/run.py) on a machine with network.

    python ci/gpu_check/prepare.py --wheelhouse dist/wheelhouse --carry .gpu-carry

The GPU machine lent to this project reaches no package index, so everything the check installs
travels with the repository as one git-ignored folder (at most 64 MiB with the tree):

* ``wheels/``: our release-train wheels from the wheelhouse (core and the backends that can run on
  an NVIDIA machine), apache-tvm-ffi for the GPU machine's Python and for this one (so ``--fake``
  installs the very same set here), and the ``wgpu`` wheel that carries wgpu-native;
* ``apache/``: apache-tvm 0.27's ``tvm`` package without its compiler library, the runtime-only
  install it supports (``TVM_USE_RUNTIME_LIB=1``), with the wheels it imports (ml_dtypes,
  typing_extensions): the reference runtime of the CUDA benchmark;
* ``debs/``: Debian's OpenCL ICD loader and Vulkan loader with glvnd, which that machine lacks
  (measured on the first run: gpu-run-notes.md); run.py unpacks them with ``dpkg -x``;
* ``manifest.json``: what was put there, with sizes and sha256.

Downloads go through pip's and apt's own caches, so a second run costs little.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

# Of our wheels, what can run on an NVIDIA Linux machine (rocm, metal and dnnl cannot or need
# nothing from a GPU).
OUR_DISTRIBUTIONS = (
    "tvm_runtime",
    "tvm_runtime_cuda",
    "tvm_runtime_opencl",
    "tvm_runtime_vulkan",
    "tvm_runtime_webgpu",
    "tvm_runtime_extra",
)
# The GPU machine's interpreter (gpu-run-notes.md: Python 3.12.3); this machine's is added.
GPU_PYTHON = "3.12"
APACHE_TVM = "apache-tvm==0.27.0.post1"
APACHE_IMPORTS = ("ml_dtypes", "typing_extensions")
WGPU = "wgpu>=0.32,<0.33"
# Loaders only: the NVIDIA driver provides the OpenCL/Vulkan/EGL implementations.
DEBIAN_PACKAGES = (
    "ocl-icd-libopencl1",
    "libvulkan1",
    "libegl1",
    "libglvnd0",
    "libopengl0",
    "libgl1",
    "libglx0",
    "libgles2",
)
# What apache-tvm's runtime-only import never touches: the 250 MB compiler, its bundled
# third-party headers, sources and web runtime.
APACHE_DROP = ("tvm/lib/libtvm_compiler.so", "tvm/3rdparty/", "tvm/src/", "tvm/include/", "tvm/web/")
CARRY_LIMIT = 48 << 20  # the tree itself is ~15 MiB of the 64 MiB that travel


def _platform_args(python: str) -> list[str]:
    plats = [
        "manylinux_2_28_x86_64",
        "manylinux_2_27_x86_64",
        "manylinux_2_17_x86_64",
        "manylinux2014_x86_64",
    ]
    args = ["--only-binary=:all:", "--python-version", python, "--implementation", "cp"]
    for p in plats:
        args += ["--platform", p]
    return args


def _pip_download(dest: Path, requirement: str, python: str) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(dest)]
    subprocess.run([*cmd, *_platform_args(python), requirement], check=True)


def _tvm_ffi_requirement() -> str:
    """The apache-tvm-ffi our wheels were built against: the version installed where this runs
    (nox's build venv), which the wheels' metadata admits."""
    from importlib.metadata import version

    return f"apache-tvm-ffi=={version('apache-tvm-ffi')}"


def _our_wheels(wheelhouse: Path, dest: Path) -> None:
    for dist in OUR_DISTRIBUTIONS:
        found = sorted(wheelhouse.glob(f"{dist}-*manylinux*x86_64.whl"))
        if not found:
            raise SystemExit(f"{wheelhouse} has no {dist} wheel for x86_64: run `nox -s build` first")
        shutil.copy2(found[-1], dest / found[-1].name)


def _apache_runtime_only(dest: Path) -> None:
    """apache-tvm's `tvm` package minus what a runtime-only import never loads, as one tarball."""
    with tempfile.TemporaryDirectory() as tmp:
        _pip_download(Path(tmp), APACHE_TVM, GPU_PYTHON)
        (wheel,) = Path(tmp).glob("apache_tvm-*.whl")
        with (
            zipfile.ZipFile(wheel) as zf,
            tarfile.open(dest / "apache-tvm-runtime-only.tar.gz", "w:gz") as tar,
        ):
            for info in zf.infolist():
                name = info.filename
                if not name.startswith("tvm/") or name.endswith("/") or name.startswith(APACHE_DROP):
                    continue
                data = zf.read(info)
                member = tarfile.TarInfo(name)
                member.size = len(data)
                member.mode = 0o755 if name.endswith(".so") else 0o644
                member.mtime = 0
                tar.addfile(member, fileobj=io.BytesIO(data))
        (dest / "apache-tvm.version").write_text(wheel.name + "\n")


def _debs(dest: Path) -> None:
    subprocess.run(["apt-get", "download", *DEBIAN_PACKAGES], cwd=dest, check=True, capture_output=True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--wheelhouse", type=Path, required=True)
    parser.add_argument("--carry", type=Path, required=True)
    args = parser.parse_args()

    carry: Path = args.carry
    shutil.rmtree(carry, ignore_errors=True)
    wheels, apache, debs = carry / "wheels", carry / "apache", carry / "debs"
    for d in (wheels, apache, debs):
        d.mkdir(parents=True)

    _our_wheels(args.wheelhouse, wheels)
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    ffi = _tvm_ffi_requirement()
    for python in sorted({GPU_PYTHON, here}):
        _pip_download(wheels, ffi, python)
        for req in APACHE_IMPORTS:
            _pip_download(apache, req, python)
    _pip_download(wheels, WGPU, GPU_PYTHON)
    _apache_runtime_only(apache)
    _debs(debs)

    files = sorted(p for p in carry.rglob("*") if p.is_file())
    manifest = {
        "files": {
            str(p.relative_to(carry)): {"bytes": p.stat().st_size, "sha256": _sha256(p)} for p in files
        },
        "tvm_ffi": ffi,
        "apache_tvm": APACHE_TVM,
    }
    (carry / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    total = sum(p.stat().st_size for p in files)
    print(f"[gpu-check] carry folder {carry}: {len(files)} files, {total / 2**20:.1f} MiB")
    if total > CARRY_LIMIT:
        raise SystemExit(
            f"{carry} holds {total / 2**20:.1f} MiB, over the {CARRY_LIMIT >> 20} MiB it may carry"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
