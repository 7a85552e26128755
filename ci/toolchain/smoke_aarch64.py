"""Smoke-test aarch64 wheels on an x86_64 host under qemu user-mode emulation, install to verdict.

    python ci/toolchain/smoke_aarch64.py --wheelhouse DIST_AARCH64 --tvm-python VENV/bin/python
        [--work /tmp/tvmrt-aarch64-smoke] [--timeout 900]

1. An aarch64 Debian root: the bookworm arm64 packages of python3.11, the OpenCL ICD loader and
   PoCL with everything they need (debian_packages.py: apt-get with a private state directory,
   the host's apt configuration and dpkg database untouched, then dpkg-deb -x).
2. An aarch64 site-packages: apache-tvm-ffi and numpy for manylinux_2_28_aarch64 from the index,
   then tvm[opencl] strictly from the wheelhouse (the `tvm` name on PyPI is another project).
3. aarch64 artifacts compiled by apache-tvm 0.27 (--tvm-python, its own environment) with
   make_aarch64_artifacts.py, linked by zig.
4. Under `qemu-aarch64-static -L <root>`: `python -m tvm.backend`, then smoke_check.py (a CPU
   kernel, an error thrown inside the core, an OpenCL kernel on PoCL).

Needs qemu-user-static (apt-get install qemu-user-static), apt-get and dpkg-deb (Debian hosts),
pip, and ziglang in this Python.  binfmt_misc is not needed: the one aarch64 program, Python, is
started through qemu explicitly; the `ld` PoCL's kernel linking runs is zig's cross linker, and
qemu_access_shim.c works around a path mapping qemu 7.2 lacks.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import debian_packages  # noqa: E402  (beside this file)

ROOT_PACKAGES = [
    "python3.11-minimal",
    "libpython3.11-stdlib",
    "libffi8",
    "libstdc++6",
    "libgcc-s1",
    "ocl-icd-libopencl1",
    "pocl-opencl-icd",
]
# pip takes --platform literally: list every manylinux the wheels may carry (2_17 ... 2_28).
PLATFORM = [arg for minor in range(17, 29) for arg in ("--platform", f"manylinux_2_{minor}_aarch64")]
PLATFORM += ["--python-version", "3.11", "--implementation", "cp", "--only-binary=:all:"]
QEMU = "qemu-aarch64-static"


def _log(message: str) -> None:
    print(f"[smoke_aarch64] {message}", flush=True)


def _run(cmd: list[str], timeout: float, **kwargs) -> None:
    _log("$ " + " ".join(map(str, cmd)))
    subprocess.run(cmd, check=True, timeout=timeout, **kwargs)


def make_root(work: Path) -> Path:
    root = work / "root"
    if not (root / "usr/bin/python3.11").is_file():
        debian_packages.unpack(work, "aarch64", ROOT_PACKAGES, root, with_depends=True)
    return root


def make_kernel_linker(work: Path) -> Path:
    """PoCL links each kernel with clang's driver (inside the emulated process), which runs `ld`
    from PATH; the host kernel would start the host's x86_64 ld.  This `ld` runs zig's lld for
    aarch64 instead, without the library options: the root has no development files, and the
    smoke test's kernel (C = A + B) needs no library."""
    bin_dir = work / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = f"""#!/bin/sh
for arg; do
  shift
  case "$arg" in -L*|-lgcc|-lgcc_s|-lc|-lm|--as-needed|--no-as-needed) ;; *) set -- "$@" "$arg" ;; esac
done
exec "{_zig()}" ld.lld "$@"
"""
    (bin_dir / "ld").write_text(script)
    (bin_dir / "ld").chmod(0o755)
    return bin_dir


def make_site(work: Path, wheelhouse: Path, timeout: float) -> Path:
    """apache-tvm-ffi and numpy from the index, then our wheels (never the CUDA one: no GPU)."""
    site = work / "site-packages"
    ours_dir = work / "site-ours"
    shutil.rmtree(site, ignore_errors=True)
    shutil.rmtree(ours_dir, ignore_errors=True)
    ours = sorted(str(w) for w in wheelhouse.glob("*.whl") if not w.name.startswith("tvm_runtime_cuda"))
    if not any(Path(w).name.startswith("tvm_runtime-") for w in ours):
        raise SystemExit(f"no tvm_runtime wheel in {wheelhouse}")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", *PLATFORM, "--target"]
    _run([*pip, str(site), "apache-tvm-ffi>=0.1.15,<0.2", "numpy"], timeout)
    _run([*pip, str(ours_dir), "--no-index", "--no-deps", *ours], timeout)
    for entry in ours_dir.iterdir():
        shutil.move(str(entry), site / entry.name)
    return site


def make_artifacts(work: Path, tvm_python: str, timeout: float) -> Path:
    out = work / "artifacts"
    env = dict(os.environ, TVMRT_ZIG=str(_zig()))
    _run([tvm_python, str(HERE / "make_aarch64_artifacts.py"), str(out)], timeout, env=env)
    return out


def _zig() -> Path:
    spec = importlib.util.find_spec("ziglang")
    if spec is None or spec.origin is None:
        raise SystemExit("this Python lacks ziglang (pip install ziglang): zig links aarch64 code")
    return Path(spec.origin).parent / "zig"


def make_access_shim(work: Path, timeout: float) -> str:
    """qemu_access_shim.c for the guest (aarch64) and for the host programs the guest starts
    (x86_64: zig, through the clang script), chosen by ld.so's $PLATFORM token."""
    for arch in ("aarch64", "x86_64"):
        out = work / "access-shim" / arch / "libqemu_access_shim.so"
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [str(_zig()), "cc", f"--target={arch}-linux-gnu.2.28", "-O2", "-fPIC", "-shared"]
        _run([*cmd, str(HERE / "qemu_access_shim.c"), "-o", str(out)], timeout)
    return str(work / "access-shim" / "$PLATFORM" / "libqemu_access_shim.so")


def run_emulated(root: Path, site: Path, shim: str, args: list[str], timeout: float) -> None:
    env = {
        "PATH": f"{make_kernel_linker(root.parent)}:/usr/bin:/bin",
        "HOME": str(root.parent),
        "PYTHONPATH": str(site),
        "PYTHONNOUSERSITE": "1",
        "POCL_CACHE_DIR": str(root.parent / "pocl-cache"),
        "LD_PRELOAD": shim,
    }
    python = root / "usr/bin/python3.11"
    _run([QEMU, "-L", str(root), str(python), *args], timeout, env=env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheelhouse", type=Path, required=True, help="the aarch64 wheels")
    parser.add_argument("--tvm-python", required=True, help="a Python with apache-tvm 0.27")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tvmrt-aarch64-smoke"))
    parser.add_argument("--timeout", type=float, default=900, help="seconds per step")
    args = parser.parse_args()
    if shutil.which(QEMU) is None:
        raise SystemExit(f"{QEMU} not found: apt-get install qemu-user-static")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    root = make_root(work)
    site = make_site(work, args.wheelhouse.resolve(), args.timeout)
    artifacts = make_artifacts(work, args.tvm_python, args.timeout)
    shim = make_access_shim(work, args.timeout)
    _log(f"prepared in {time.monotonic() - start:.0f} s")
    start = time.monotonic()
    run_emulated(root, site, shim, ["-m", "tvm.backend"], args.timeout)
    run_emulated(root, site, shim, [str(HERE / "smoke_check.py"), str(artifacts)], args.timeout)
    _log(f"emulated checks passed in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
