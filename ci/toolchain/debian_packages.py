"""Download and unpack Debian packages of any architecture without touching the host's apt state
or dpkg database: the host's own package sources (its /etc/apt configuration, so whatever mirror
the machine is set up with) read for another architecture into private lists under a work
directory, then dpkg-deb -x.  The host must be a Debian release whose packages are built for the
target architecture too (bookworm: amd64 and arm64).

Used by build_wheels.py (the target's libstdc++.so.6 / libgcc_s.so.1 to link against, see
zig-common.cmake) and smoke_aarch64.py (an aarch64 root for qemu).  Needs apt-get and dpkg-deb.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

# Debian architecture and multiarch directory of each wheel architecture.
DEBIAN_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


def _apt(work: Path, arch: str) -> list[str]:
    deb_arch = DEBIAN_ARCH[arch]
    apt = work / f"apt-{deb_arch}"
    for sub in ("lists/partial", "archives/partial", "cache"):
        (apt / sub).mkdir(parents=True, exist_ok=True)
    (apt / "status").touch()  # an empty dpkg database: apt resolves the whole closure
    opts = {
        "APT::Architecture": deb_arch,
        "APT::Architectures::": deb_arch,
        "Dir::State::Lists": apt / "lists",
        "Dir::State::status": apt / "status",
        "Dir::Cache": apt / "cache",
        "Dir::Cache::archives": apt / "archives",
        "Debug::NoLocking": "1",
    }
    cmd = ["apt-get", "-qq"] + [arg for k, v in opts.items() for arg in ("-o", f"{k}={v}")]
    if not (apt / "lists" / "updated").exists():
        subprocess.run([*cmd, "update"], check=True)
        (apt / "lists" / "updated").touch()
    return cmd


def unpack(work: Path, arch: str, packages: list[str], dest: Path, with_depends: bool) -> Path:
    """Unpack `packages` (and, with_depends, everything they need) for `arch` into `dest`."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise SystemExit("apt-get and dpkg-deb are needed to fetch Debian packages (a Debian host)")
    apt = _apt(work, arch)
    archives = work / f"apt-{DEBIAN_ARCH[arch]}" / "archives"
    if with_depends:
        debs_before = set(archives.glob("*.deb"))
        install = [*apt, "install", "--download-only", "-y", "--no-install-recommends", *packages]
        subprocess.run(install, check=True)
        debs = sorted(set(archives.glob("*.deb")) | debs_before)
    else:
        subprocess.run([*apt, "download", *packages], check=True, cwd=archives)
        debs = sorted(d for d in archives.glob("*.deb") if d.name.split("_")[0] in packages)
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    for deb in debs:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(staging)], check=True)
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)
    return dest


def cxx_runtime(work: Path, arch: str) -> Path:
    """A directory holding the target's libstdc++.so.6 and libgcc_s.so.1 (Debian bookworm)."""
    out = work / "cxx-runtime"
    if (out / "libstdc++.so.6").is_file() and (out / "libgcc_s.so.1").is_file():
        return out
    root = unpack(work, arch, ["libstdc++6", "libgcc-s1"], work / "cxx-runtime-root", False)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("libstdc++.so.6", "libgcc_s.so.1"):
        (found,) = [p for p in root.rglob(name) if p.parent.name.endswith("-linux-gnu")]
        shutil.copyfile(found.resolve(), out / name)
    return out
