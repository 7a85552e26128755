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
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

VENDOR_LIBS = ("libOpenCL", "libvulkan", "libcuda", "libnvrtc", "libamdhip64")


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
    if not any(_dist_name(w) == "tvm_runtime" for w in wheels):
        errors.append("no tvm_runtime wheel")
    if not any(_dist_name(w) == "tvm" for w in wheels):
        errors.append("no tvm (meta) wheel")
    for wheel in wheels:
        dist, tags = _dist_name(wheel), _tags(wheel)
        with zipfile.ZipFile(wheel) as zf:
            files = _payload(zf.namelist())
            for f in files:
                if f in owners:
                    errors.append(f"{f} is shipped by both {owners[f]} and {dist}")
                owners[f] = dist
                if ".libs/" in f:
                    errors.append(f"{wheel.name}: auditwheel grafted {f}")
            if dist == "tvm":
                if tags != "py3-none-any":
                    errors.append(f"{wheel.name}: meta-package must be py3-none-any")
                if files:
                    errors.append(f"{wheel.name}: meta-package must ship no files, has {files[:3]}")
                continue
            if not tags.startswith("py3-none-") or tags.endswith("-any"):
                errors.append(f"{wheel.name}: native wheel must be py3-none-<platform>, is {tags}")
            if dist == "tvm_runtime":
                for required in (
                    "tvm/__init__.py",
                    "tvm/backend/__init__.py",
                    "tvm/lib/libtvm_runtime.so",
                    "tvm/include/tvm_runtime/c_api.h",
                    "tvm/share/cmake/tvm_runtime/tvm_runtime-config.cmake",
                ):
                    if required not in files:
                        errors.append(f"{wheel.name}: missing {required}")
            else:
                backend = dist.removeprefix("tvm_runtime_")
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


def main() -> int:
    wheelhouse = Path(sys.argv[1] if len(sys.argv) > 1 else "dist/wheelhouse")
    errors = check(wheelhouse)
    for e in errors:
        print(f"ERROR: {e}", file=sys.stderr)
    if not errors:
        print(f"wheelhouse OK: {', '.join(sorted(w.name for w in wheelhouse.glob('*.whl')))}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
