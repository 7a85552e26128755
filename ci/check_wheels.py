"""Check the wheelhouse against the packaging rules (run by `nox -s build` and the tests).

Rules: native wheels are `py3-none-<platform>`; the meta-package is `py3-none-any` with no files;
nothing is grafted by auditwheel (no `*.libs/`), in particular never libtvm_ffi or the core;
only tvm-runtime ships `tvm/__init__.py` and `tvm/backend/__init__.py`; a backend ships only
`tvm/backend/<name>/**` and declares its `tvm.backends` entry point; no file is shipped by two
wheels (pip would silently overwrite it, then delete it on the other's uninstall); no DSO
links a vendor driver library.

Usage: python ci/check_wheels.py dist/wheelhouse
"""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "packages"))
import release_train  # noqa: E402  (the packages' own declarations)

VENDOR_LIBS = release_train.vendor_library_prefixes()


def _dist_name(wheel: Path) -> str:
    return wheel.name.split("-")[0]


def _tags(wheel: Path) -> str:
    return "-".join(wheel.stem.split("-")[-3:])


def _payload(names: list[str]) -> list[str]:
    return [n for n in names if ".dist-info/" not in n and not n.endswith("/")]


def _entry_points(zf: zipfile.ZipFile) -> dict[str, str]:
    for name in zf.namelist():
        if name.endswith(".dist-info/entry_points.txt"):
            parser = configparser.ConfigParser()
            parser.read_string(zf.read(name).decode())
            return dict(parser["tvm.backends"]) if parser.has_section("tvm.backends") else {}
    return {}


def _needed(zf: zipfile.ZipFile, member: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(zf.extract(member, tmp))
        out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=False)
    return [line.split("[")[1].rstrip("]") for line in out.stdout.splitlines() if "(NEEDED)" in line]


def check(wheelhouse: Path) -> list[str]:
    errors: list[str] = []
    owners: dict[str, str] = {}
    wheels = sorted(wheelhouse.glob("*.whl"))
    declared = {p.distribution.replace("-", "_"): p for p in release_train.packages()}
    built = {_dist_name(w) for w in wheels}
    for missing in sorted(set(declared) - built):
        errors.append(f"no {missing} wheel (declared in {declared[missing].directory})")
    for wheel in wheels:
        dist, tags = _dist_name(wheel), _tags(wheel)
        if dist not in declared:
            errors.append(f"{wheel.name}: not a distribution declared under packages/")
            continue
        role = declared[dist].role
        with zipfile.ZipFile(wheel) as zf:
            files = _payload(zf.namelist())
            for f in files:
                if f in owners:
                    errors.append(f"{f} is shipped by both {owners[f]} and {dist}")
                owners[f] = dist
                if ".libs/" in f:
                    errors.append(f"{wheel.name}: auditwheel grafted {f}")
            if role == "meta":
                if tags != "py3-none-any":
                    errors.append(f"{wheel.name}: meta-package must be py3-none-any")
                if files:
                    errors.append(f"{wheel.name}: meta-package must ship no files, has {files[:3]}")
                continue
            if not tags.startswith("py3-none-") or tags.endswith("-any"):
                errors.append(f"{wheel.name}: native wheel must be py3-none-<platform>, is {tags}")
            if role == "core":
                for required in (
                    "tvm/__init__.py",
                    "tvm/backend/__init__.py",
                    "tvm/lib/libtvm_runtime.so",
                    "tvm/include/tvm_runtime/c_api.h",
                    "tvm/share/cmake/tvm_runtime/tvm_runtime-config.cmake",
                    "tvm/share/cmake/tvm_runtime/tvm-config.cmake",
                    "tvm/config.py",
                ):
                    if required not in files:
                        errors.append(f"{wheel.name}: missing {required}")
            else:
                backend = declared[dist].name
                prefix = f"tvm/backend/{backend}/"
                stray = [f for f in files if not f.startswith(prefix)]
                if stray:
                    errors.append(f"{wheel.name}: files outside {prefix}: {stray[:3]}")
                if backend not in _entry_points(zf):
                    errors.append(f"{wheel.name}: no `{backend}` entry point in group tvm.backends")
            for so in (f for f in files if f.endswith(".so")):
                for lib in _needed(zf, so):
                    if lib.startswith(VENDOR_LIBS):
                        errors.append(f"{wheel.name}: {so} links the vendor library {lib}")
    return errors


# Platform rule (ci/build_wheels.py, ci/toolchain/): native wheels install where apache-tvm-ffi
# installs, glibc 2.28 and newer.  TVM_WHEEL_MAX_MANYLINUX=any relaxes it for wheels built with the
# host's compilers (build_wheels.py --toolchain host), which are never released.
MAX_GLIBC = (2, 28)
WHEEL_ARCHES = ("x86_64", "aarch64")
# Legacy manylinux names and the glibc they mean (PEP 600).
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def _glibc_of_tag(platform_tag: str) -> tuple[int, int] | None:
    """(major, minor) glibc of a manylinux platform tag, None for any other tag."""
    legacy = LEGACY_MANYLINUX.get(platform_tag.split("_")[0])
    if legacy:
        return legacy
    match = re.fullmatch(r"manylinux_(\d+)_(\d+)_\w+", platform_tag)
    return (int(match[1]), int(match[2])) if match else None


def _glibc_versions_needed(zf: zipfile.ZipFile, member: str) -> set[tuple[int, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(zf.extract(member, tmp))
        out = subprocess.run(
            ["readelf", "-W", "--dyn-syms", str(path)], capture_output=True, text=True, check=False
        )
    return {(int(a), int(b)) for a, b in re.findall(r"@GLIBC_(\d+)\.(\d+)", out.stdout)}


def check_platform_tags(wheels: list[Path]) -> list[str]:
    """Every native wheel is manylinux_2_28 (or older) for x86_64/aarch64, by name and by the
    glibc symbol versions its DSOs actually bind."""
    if os.environ.get("TVM_WHEEL_MAX_MANYLINUX") == "any":
        return []
    errors: list[str] = []
    limit = "manylinux_{}_{}".format(*MAX_GLIBC)
    for wheel in wheels:
        platforms = _tags(wheel).split("-")[-1].split(".")
        if platforms == ["any"]:
            continue
        for plat in platforms:
            glibc = _glibc_of_tag(plat)
            if glibc is None or not plat.endswith(WHEEL_ARCHES):
                errors.append(
                    f"{wheel.name}: platform tag {plat} is not manylinux for {'/'.join(WHEEL_ARCHES)}"
                )
            elif glibc > MAX_GLIBC:
                errors.append(f"{wheel.name}: platform tag {plat} is newer than {limit}")
        with zipfile.ZipFile(wheel) as zf:
            for so in (n for n in zf.namelist() if n.endswith(".so")):
                newest = max(_glibc_versions_needed(zf, so), default=(0, 0))
                if newest > MAX_GLIBC:
                    errors.append(f"{wheel.name}: {so} needs GLIBC_{newest[0]}.{newest[1]} (> {limit})")
    return errors


def main() -> int:
    wheelhouse = Path(sys.argv[1] if len(sys.argv) > 1 else "dist/wheelhouse")
    errors = check(wheelhouse)
    errors += check_platform_tags(sorted(wheelhouse.glob("*.whl")))
    for e in errors:
        print(f"ERROR: {e}", file=sys.stderr)
    if not errors:
        print(f"wheelhouse OK: {', '.join(sorted(w.name for w in wheelhouse.glob('*.whl')))}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
