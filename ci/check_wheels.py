"""Check the wheelhouse against the packaging rules (run by `nox -s build` and the tests).

Rules: native wheels are `py3-none-<platform>`; the meta-package is `py3-none-any` with no files;
nothing is grafted by auditwheel (no `*.libs/`), in particular never libtvm_ffi or the core;
only tvm-runtime ships `tvm/__init__.py` and `tvm/backend/__init__.py`; a backend ships only
`tvm/backend/<name>/**` and declares its `tvm.backends` entry point; no file is shipped by two
wheels (pip would silently overwrite it, then delete it on the other's uninstall); no DSO
links a vendor driver library.  Platform: every native wheel is tagged manylinux_2_28 (or older)
for x86_64/aarch64 and its DSOs are of that architecture and require no symbol version
(GLIBC, GLIBCXX, CXXABI, GCC, ...) beyond auditwheel's manylinux_2_28 policy for it.
A wheelhouse of macOS wheels (py3-none-macosx_11_0_arm64) is checked against the packages
declared for macos-arm64 and ci/check_macos_wheels.py's rules for every Mach-O file.

Usage: python ci/check_wheels.py dist/wheelhouse
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "packages"))
# The backend SDK as the core wheel must ship it: every header under src/include, tiers included.
SDK_INCLUDE = Path(__file__).resolve().parent.parent / "src" / "include"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_macos_wheels  # noqa: E402
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


def _is_macos(wheel: Path) -> bool:
    return "macosx" in _tags(wheel)


def wheelhouse_platform(wheels: list[Path]) -> str | None:
    """The release_train platform of a wheelhouse's native wheels (None: none or mixed)."""
    found = set()
    for wheel in wheels:
        plat = _tags(wheel).split("-")[-1]
        if plat == "any":
            continue
        arch = next((a for a in ("x86_64", "aarch64", "arm64") if plat.endswith(f"_{a}")), "?")
        found.add(f"{'macos' if 'macosx' in plat else 'linux'}-{arch}")
    return found.pop() if len(found) == 1 else None


def check(wheelhouse: Path) -> list[str]:
    errors: list[str] = []
    owners: dict[str, str] = {}
    wheels = sorted(wheelhouse.glob("*.whl"))
    platform = wheelhouse_platform(wheels)
    # The packages built for the wheelhouse's platform (released there, or test-only).
    declared = {
        p.distribution.replace("-", "_"): p
        for p in release_train.packages()
        if platform is None or p.built_on(platform)
    }
    suffix = ".dylib" if platform and platform.startswith("macos") else ".so"
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
                    f"tvm/lib/libtvm_runtime{suffix}",
                    "tvm/include/tvm_runtime/c_api.h",
                    "tvm/share/cmake/tvm_runtime/tvm_runtime-config.cmake",
                    "tvm/share/cmake/tvm_runtime/tvm-config.cmake",
                    "tvm/config.py",
                ):
                    if required not in files:
                        errors.append(f"{wheel.name}: missing {required}")
                sdk = sorted(f"tvm/include/{h.relative_to(SDK_INCLUDE)}" for h in SDK_INCLUDE.rglob("*.h"))
                unshipped = [h for h in sdk if h not in files]
                if unshipped:
                    errors.append(f"{wheel.name}: the SDK headers {unshipped[:5]} are not in the wheel")
            else:
                backend = declared[dist].name
                prefix = f"tvm/backend/{backend}/"
                stray = [f for f in files if not f.startswith(prefix)]
                if stray:
                    errors.append(f"{wheel.name}: files outside {prefix}: {stray[:3]}")
                if backend not in _entry_points(zf):
                    errors.append(f"{wheel.name}: no `{backend}` entry point in group tvm.backends")
            if _is_macos(wheel):
                errors += check_macos_wheels.check_macos_wheel(wheel, role)
                continue
            for so in (f for f in files if f.endswith(".so")):
                for lib in _needed(zf, so):
                    if lib.startswith(VENDOR_LIBS):
                        errors.append(f"{wheel.name}: {so} links the vendor library {lib}")
    return errors


# Platform rule (ci/build_wheels.py, ci/toolchain/): native wheels install where apache-tvm-ffi
# installs, glibc 2.28 and newer.  TVM_WHEEL_MAX_MANYLINUX=any relaxes it for wheels built with the
# host's compilers (build_wheels.py --toolchain host), which are never released.
MAX_GLIBC = (2, 28)
MANYLINUX = "manylinux_{}_{}".format(*MAX_GLIBC)
WHEEL_ARCHES = ("x86_64", "aarch64")
# readelf's name of each wheel architecture's ELF machine.
ELF_MACHINES = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}
# Legacy manylinux names and the glibc they mean (PEP 600).
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def _glibc_of_tag(platform_tag: str) -> tuple[int, int] | None:
    """(major, minor) glibc of a manylinux platform tag, None for any other tag."""
    legacy = LEGACY_MANYLINUX.get(platform_tag.split("_")[0])
    if legacy:
        return legacy
    match = re.fullmatch(r"manylinux_(\d+)_(\d+)_\w+", platform_tag)
    return (int(match[1]), int(match[2])) if match else None


def manylinux_symbol_versions(arch: str, policy: str = MANYLINUX) -> dict[str, set[str]]:
    """What a manylinux policy lets a DSO of ``arch`` require, per symbol-version family:
    ``{"GLIBC": {"2.2.5", ..., "2.28"}, "GLIBCXX": {...}, "CXXABI": {...}, "GCC": {...}, ...}``.

    Read from the policy file of the installed auditwheel (pinned in ci/toolchain/pins.toml), the
    same rules `auditwheel repair --plat` applies, for either architecture on any host.
    """
    spec = importlib.util.find_spec("auditwheel")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("check_wheels.py needs auditwheel (its manylinux policy): pip install auditwheel")
    path = Path(next(iter(spec.submodule_search_locations))) / "policy" / "manylinux-policy.json"
    for entry in json.loads(path.read_text(encoding="utf-8")):
        if entry["name"] == policy:
            return {family: set(versions) for family, versions in entry["symbol_versions"][arch].items()}
    raise SystemExit(f"{path} has no policy {policy}")


def _newest(versions: set[str]) -> str:
    numeric = [v for v in versions if re.fullmatch(r"[\d.]+", v)]
    return max(numeric, key=lambda v: tuple(int(p) for p in v.split(".")))


def elf_facts(path: Path) -> tuple[str, dict[str, set[str]]]:
    """(ELF machine, {needed library: symbol versions required from it}) of a DSO."""
    out = subprocess.run(
        ["readelf", "-W", "-h", "-V", str(path)], capture_output=True, text=True, check=True
    ).stdout
    machine = re.search(r"^\s*Machine:\s*(.+?)\s*$", out, re.MULTILINE)
    needs: dict[str, set[str]] = {}
    # The version needs section ('.gnu.version_r') runs to the next blank line.
    section = out.partition("Version needs section")[2]
    library = None
    for line in re.split(r"\n\s*\n", section, maxsplit=1)[0].splitlines():
        if file := re.search(r"File: (\S+)", line):
            library = file[1]
            needs.setdefault(library, set())
        elif library and (name := re.search(r"Name: (\S+)", line)):
            needs[library].add(name[1])
    return (machine[1] if machine else "?"), needs


def policy_violations(arch: str, needs: dict[str, set[str]], policy: str = MANYLINUX) -> list[str]:
    """The symbol versions in ``needs`` that ``policy`` does not allow on ``arch``.

    A version belongs to a family by its prefix (``GLIBCXX_3.4.30`` -> GLIBCXX); families the
    policy does not list (a library's own versions) are not its business.
    """
    allowed = manylinux_symbol_versions(arch, policy)
    problems = []
    for library, versions in sorted(needs.items()):
        for version in sorted(versions):
            family, _, number = version.rpartition("_")
            if family in allowed and number not in allowed[family]:
                newest = _newest(allowed[family])
                problems.append(
                    f"needs {version} from {library}; {policy} allows {family} up to "
                    f"{family}_{newest} on {arch}"
                )
    return problems


def check_platform_tags(wheels: list[Path]) -> list[str]:
    """Every native wheel is manylinux_2_28 (or older) for x86_64/aarch64, by name and by what its
    DSOs actually require: their ELF machine, and every GLIBC, GLIBCXX, CXXABI, GCC (...) symbol
    version within auditwheel's manylinux_2_28 policy for that architecture."""
    if os.environ.get("TVM_WHEEL_MAX_MANYLINUX") == "any":
        return []
    errors: list[str] = []
    for wheel in wheels:
        platforms = _tags(wheel).split("-")[-1].split(".")
        if platforms == ["any"] or _is_macos(wheel):
            continue  # macOS wheels: check_macos_wheels.py, run by check()
        arches = set()
        for plat in platforms:
            glibc = _glibc_of_tag(plat)
            arch = next((a for a in WHEEL_ARCHES if plat.endswith(f"_{a}")), None)
            if glibc is None or arch is None:
                errors.append(
                    f"{wheel.name}: platform tag {plat} is not manylinux for {'/'.join(WHEEL_ARCHES)}"
                )
            elif glibc > MAX_GLIBC:
                errors.append(f"{wheel.name}: platform tag {plat} is newer than {MANYLINUX}")
            else:
                arches.add(arch)
        if len(arches) != 1:
            continue  # the tag errors above say why
        (arch,) = arches
        with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory() as tmp:
            for so in (n for n in zf.namelist() if n.endswith(".so")):
                machine, needs = elf_facts(Path(zf.extract(so, tmp)))
                if machine != ELF_MACHINES[arch]:
                    errors.append(f"{wheel.name}: {so} is built for {machine}, not {arch}")
                    continue
                errors += [f"{wheel.name}: {so} {problem}" for problem in policy_violations(arch, needs)]
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
