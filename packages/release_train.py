"""The release train: every distribution of this repository, read from its own pyproject.toml.

Each package declares itself once, in ``[tool.tvm-runtime]`` of ``packages/<dist>/pyproject.toml``::

    [tool.tvm-runtime]
    role = "backend"                   # "core" | "backend" | "meta"
    device-types = ["kDLOpenCL"]       # tvm_ffi.DLDeviceType member names the backend serves
    module-kinds = ["opencl"]          # ffi.Module.load_from_bytes.<kind> loaders it registers
    vendor-libraries = ["libOpenCL"]   # SONAME prefixes it dlopens: never linked, never bundled
    global-functions = []              # global functions it registers ("a.b.*": a family); the
                                       # core's "cannot find function" errors name the wheel
    extras = { opencl = "" }           # extra of tvm / tvm-runtime -> extras of this distribution
    platforms = ["linux-x86_64", "linux-aarch64"]   # where its wheels are released (this default)
    test-platforms = []                # built there for the test suite only, never released
    test-extras = []                   # more of its extras whose index packages the tests install
    test-require = ["opencl"]          # what CI machines provide for real: `nox -s tests` sets
                                       # TVM_TEST_REQUIRE_<NAME>=1, so those tests fail, never skip
    bench-requirements = ["pyopencl"]  # index packages its benchmark (benchmarks/<name>_bench.py)
                                       # needs beside the wheels: the peer it is measured against

Platforms are ``linux-x86_64``, ``linux-aarch64`` (manylinux_2_28) and ``macos-arm64``
(macosx_11_0_arm64).  The core and the meta-package must be released wherever any backend is;
extras of a backend released on some of them only carry an environment marker
(``tvm-runtime-cuda==0.1.0; sys_platform == 'linux'``), so ``pip install "tvm-runtime[all]"``
resolves on every platform.  ci/build_wheels.py builds, for one platform, the packages released
or test-built there (``built_on``).

The core's declaration also states the tested range of apache-tvm-ffi once (``apache-tvm-ffi =
">=0.1.15,<0.2"``); ``sync`` writes it into every file of the repository that states a range and
``check`` fails on drift.

Everything that used to list the backends by hand derives from these declarations: the build
order and auditwheel excludes (nox, ci/build_wheels.py), the release matrix, the wheel checks,
the extras of ``tvm-runtime`` and ``tvm`` (``sync`` writes them, ``check`` fails when they are
stale), and the core's table of which wheel serves what (``cxx``, run by the core's CMake build).

Versioning (docs/release.md, "Versioning policy"): the C boundary's version ABI M.m lives in
``src/include/tvm_runtime/c_api.h``; the core's distribution version is ``0.M.p`` (an ABI major
bump is a new core minor), and the core's declaration records the first core release of every ABI
minor (``abi-introduced``).  Each backend requires ``tvm-runtime>=<first release with the ABI it
was built against>,<0.(M+1)`` at build and at run time; ``check`` verifies all of it, ``sync``
writes it.

Usage::

    python packages/release_train.py list           # one line per distribution
    python packages/release_train.py check          # extras, pins, tvm-ffi range up to date? (lint)
    python packages/release_train.py sync           # rewrite them
    python packages/release_train.py cxx OUT.inc    # the core's "which wheel serves this" tables
    python packages/release_train.py json           # everything, for scripts and workflows
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # scikit-build-core depends on tomli below 3.11, so build environments have it
    import tomli as tomllib

PACKAGES = Path(__file__).resolve().parent
CORE = "tvm-runtime"
META = "tvm"
ROLES = ("core", "backend", "meta")
# Never grafted into a wheel whatever the declarations say: tvm-ffi and the core must exist once
# per process (two tvm-ffi registries in one process abort at import).
ALWAYS_EXCLUDED = ("libtvm_ffi.so", "libtvm_runtime.so")
# Where wheels are built, "<os>-<arch>" (arch as the wheel tags spell it).
PLATFORMS = ("linux-x86_64", "linux-aarch64", "macos-arm64")
DEFAULT_PLATFORMS = ("linux-x86_64", "linux-aarch64")
# sys_platform of each OS, for the environment markers of extras.
_SYS_PLATFORM = {"linux": "linux", "macos": "darwin"}
# platform_machine as each OS reports it (macOS says arm64, Linux aarch64).
_MACHINE = {"linux-x86_64": "x86_64", "linux-aarch64": "aarch64", "macos-arm64": "arm64"}


@dataclass(frozen=True)
class Package:
    """One distribution of the release train, as its pyproject.toml declares it."""

    distribution: str
    version: str
    role: str
    directory: Path
    device_types: tuple[str, ...] = ()
    module_kinds: tuple[str, ...] = ()
    vendor_libraries: tuple[str, ...] = ()
    global_functions: tuple[str, ...] = ()
    extras: dict[str, str] = field(default_factory=dict)
    platforms: tuple[str, ...] = DEFAULT_PLATFORMS
    test_platforms: tuple[str, ...] = ()
    test_extras: tuple[str, ...] = ()
    test_require: tuple[str, ...] = ()
    bench_requirements: tuple[str, ...] = ()
    # [project.optional-dependencies]: extra -> requirements from the index
    optional_dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def index_requirements(self, extra: str) -> tuple[str, ...]:
        """What an extra of this distribution pulls from the package index (never our wheels,
        which are installed from the wheelhouse, --no-index, after these)."""
        return self.optional_dependencies.get(extra, ())

    def built_on(self, platform: str) -> bool:
        """Whether ci/build_wheels.py builds it for ``platform`` (released or test-only)."""
        return platform in self.platforms or platform in self.test_platforms

    @property
    def name(self) -> str:
        """Backend name: hook ``tvm.backend.<name>``, DSO ``libtvm_runtime_<name>.so``."""
        return self.distribution.removeprefix(f"{CORE}-") if self.role == "backend" else ""

    def requirement(self, extra: str) -> str:
        """The pinned requirement an extra of the core or meta-package resolves to, with the
        environment marker of its platforms when it is not released everywhere the core is."""
        own = self.extras[extra]
        marker = platform_marker(self.platforms)
        return f"{self.distribution}{f'[{own}]' if own else ''}=={self.version}" + (
            f"; {marker}" if marker else ""
        )


def _platform_list(pyproject: Path, decl: dict, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = decl.get(key, list(default))
    if not isinstance(value, list) or any(v not in PLATFORMS for v in value) or len(set(value)) != len(value):
        raise ValueError(
            f"{pyproject}: [tool.tvm-runtime] {key} must list distinct platforms among "
            f"{PLATFORMS}, got {value!r}"
        )
    return tuple(p for p in PLATFORMS if p in value)  # canonical order


def _string_list(pyproject: Path, decl: dict, key: str) -> tuple[str, ...]:
    value = decl.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{pyproject}: [tool.tvm-runtime] {key} must be a list of strings, got {value!r}")
    return tuple(value)


def platform_marker(platforms: tuple[str, ...]) -> str:
    """The PEP 508 marker selecting ``platforms`` among those the core is released on; empty when
    they cover all of them."""
    everywhere = core().platforms
    if set(everywhere) <= set(platforms):
        return ""
    clauses = []
    for os_name, sys_platform in _SYS_PLATFORM.items():
        of_os = [p for p in everywhere if p.startswith(f"{os_name}-")]
        mine = [p for p in of_os if p in platforms]
        if not mine:
            continue
        if mine == of_os:
            clauses.append(f"sys_platform == '{sys_platform}'")
        else:
            machines = " or ".join(f"platform_machine == '{_MACHINE[p]}'" for p in mine)
            clauses.append(f"(sys_platform == '{sys_platform}' and ({machines}))")
    # Single quotes: the requirement is written inside a double-quoted TOML string.
    return " or ".join(clauses) if clauses else "sys_platform == 'none'"


C_API = PACKAGES.parent / "src" / "include" / "tvm_runtime" / "c_api.h"


def abi_version() -> tuple[int, int]:
    """(major, minor) of the C boundary, as c_api.h defines it."""
    text = C_API.read_text(encoding="utf-8")
    found = {
        part: int(m.group(1))
        for part in ("MAJOR", "MINOR")
        if (m := re.search(rf"#define TVM_RUNTIME_ABI_VERSION_{part} (\d+)", text))
    }
    if set(found) != {"MAJOR", "MINOR"}:
        raise ValueError(f"{C_API}: TVM_RUNTIME_ABI_VERSION_MAJOR/MINOR not found")
    return found["MAJOR"], found["MINOR"]


def _core_declaration() -> dict:
    data = tomllib.loads((PACKAGES / CORE / "pyproject.toml").read_text(encoding="utf-8"))
    return data["tool"]["tvm-runtime"]


TVM_FFI = "apache-tvm-ffi"
# A stated range of apache-tvm-ffi, e.g. `apache-tvm-ffi>=0.1.15,<0.2` (a `==` pin of one
# installed version, or the declaration's own `apache-tvm-ffi = "..."`, is not one).
_TVM_FFI_RANGE = re.compile(r"apache-tvm-ffi(>=[0-9][0-9A-Za-z.,<>=!~*]*)")
# Where ranges are looked for: text files of the repository, outside its output folders.
_TEXT_SUFFIXES = {".toml", ".py", ".yml", ".yaml", ".sh", ".md", ".txt", ".cfg", ".cmake"}
_OUTPUT_DIRS = {"dist", "results", "build", "__pycache__", "node_modules"}


def tvm_ffi_range() -> str:
    """The tested range of apache-tvm-ffi (``>=0.1.15,<0.2``), declared once: ``apache-tvm-ffi``
    in the core's ``[tool.tvm-runtime]``."""
    declared = _core_declaration().get(TVM_FFI)
    if not isinstance(declared, str) or not _TVM_FFI_RANGE.fullmatch(TVM_FFI + declared):
        raise ValueError(
            f'packages/{CORE}/pyproject.toml: [tool.tvm-runtime] must declare {TVM_FFI} = ">=X,<Y", '
            f"got {declared!r}"
        )
    return declared


def tvm_ffi_requirement() -> str:
    return f"{TVM_FFI}{tvm_ffi_range()}"


def _text_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.iterdir()):
        if path.name.startswith(".") or path.name in _OUTPUT_DIRS:
            continue  # .git, .nox venvs, build outputs: not ours to rewrite
        if path.is_dir():
            found.extend(_text_files(path))
        elif path.suffix in _TEXT_SUFFIXES:
            found.append(path)
    return found


def tvm_ffi_rewrites(root: Path = PACKAGES.parent) -> dict[Path, str]:
    """Every text file under ``root`` that states an apache-tvm-ffi range -> its text with the
    declared range (build requirements, dependencies, workflows, scripts, docs alike)."""
    requirement = tvm_ffi_requirement()
    result = {}
    for path in _text_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if _TVM_FFI_RANGE.search(text):
            result[path] = _TVM_FFI_RANGE.sub(requirement, text)
    return result


def core_requirement() -> str:
    """What every backend requires of the core: the ABI it builds against, up to the next major."""
    major, minor = abi_version()
    introduced = _core_declaration().get("abi-introduced", {})
    first = introduced.get(f"{major}.{minor}")
    if first is None:
        raise ValueError(
            f"ABI {major}.{minor} (c_api.h) has no entry in abi-introduced of "
            f"packages/{CORE}/pyproject.toml: record the first core version that provides it"
        )
    return f"{CORE}>={first},<0.{major + 1}"


def policy_errors() -> list[str]:
    """Violations of the versioning policy that `sync` cannot fix by itself."""
    major, _ = abi_version()
    errors = []
    core_minor = core().version.split(".")[1]
    if core_minor != str(major):
        errors.append(
            f"the core is version {core().version} but the ABI major is {major}: "
            f"an ABI major bump needs core version 0.{major}.0"
        )
    try:
        core_requirement()
    except ValueError as err:
        errors.append(str(err))
    return errors


def _load(directory: Path) -> Package | None:
    pyproject = directory / "pyproject.toml"
    if not pyproject.is_file():
        return None
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    decl = data.get("tool", {}).get("tvm-runtime")
    if decl is None:
        return None
    project = data["project"]
    role = decl.get("role")
    if role not in ROLES:
        raise ValueError(f"{pyproject}: [tool.tvm-runtime] role must be one of {ROLES}, not {role!r}")
    package = Package(
        distribution=project["name"],
        version=project["version"],
        role=role,
        directory=directory,
        device_types=tuple(decl.get("device-types", ())),
        module_kinds=tuple(decl.get("module-kinds", ())),
        vendor_libraries=tuple(decl.get("vendor-libraries", ())),
        global_functions=tuple(decl.get("global-functions", ())),
        extras=dict(decl.get("extras", {})),
        platforms=_platform_list(pyproject, decl, "platforms", DEFAULT_PLATFORMS),
        test_platforms=_platform_list(pyproject, decl, "test-platforms", ()),
        test_extras=_string_list(pyproject, decl, "test-extras"),
        test_require=_string_list(pyproject, decl, "test-require"),
        bench_requirements=_string_list(pyproject, decl, "bench-requirements"),
        optional_dependencies={
            extra: tuple(reqs) for extra, reqs in project.get("optional-dependencies", {}).items()
        },
    )
    own_extras = {*package.extras.values(), *package.test_extras} - {""}
    unknown = sorted(own_extras - set(package.optional_dependencies))
    if unknown:
        raise ValueError(f"{pyproject}: [tool.tvm-runtime] names extras {unknown} it does not define")
    if set(package.platforms) & set(package.test_platforms):
        raise ValueError(f"{pyproject}: a platform is in both platforms and test-platforms")
    if role != "backend" and package.test_platforms:
        raise ValueError(f"{pyproject}: only a backend may declare test-platforms")
    if role == "backend":
        expected = project.get("entry-points", {}).get("tvm.backends", {})
        if expected.get(package.name) != f"tvm.backend.{package.name}":
            raise ValueError(
                f"{pyproject}: a backend must declare the entry point "
                f'[project.entry-points."tvm.backends"] {package.name} = "tvm.backend.{package.name}"'
            )
    return package


def packages() -> list[Package]:
    """Every declared distribution: the core first, backends by name, the meta-package last."""
    found = [p for d in sorted(PACKAGES.iterdir()) if d.is_dir() and (p := _load(d)) is not None]
    order = {"core": 0, "backend": 1, "meta": 2}
    found.sort(key=lambda p: (order[p.role], p.distribution))
    roles = [p.role for p in found]
    if roles.count("core") != 1 or roles.count("meta") != 1:
        raise ValueError(f"expected exactly one core and one meta package under {PACKAGES}, got {roles}")
    core_, meta_ = found[0], found[-1]
    for p in found[1:-1]:
        # A backend builds against the core and is installed next to it, released or tested.
        missing = [x for x in (*p.platforms, *p.test_platforms) if x not in core_.platforms]
        if missing:
            raise ValueError(f"{p.distribution} is built for {missing}, where {CORE} is not released")
    if set(meta_.platforms) != set(core_.platforms):
        raise ValueError(f"{META} must be released where {CORE} is: {core_.platforms}, not {meta_.platforms}")
    return found


def package_at(directory: Path) -> Package:
    """The declared distribution whose folder is ``directory``."""
    found = [p for p in packages() if p.directory == Path(directory).resolve()]
    if not found:
        raise ValueError(f"{directory} is not a declared package folder under {PACKAGES}")
    return found[0]


def backends() -> list[Package]:
    return [p for p in packages() if p.role == "backend"]


def core() -> Package:
    return next(p for p in packages() if p.role == "core")


def build_order(platform: str | None = None) -> list[Path]:
    """Package directories in build order: backends build against the core built just before.
    With ``platform``: only the packages built there (released or test-only)."""
    return [p.directory for p in packages() if platform is None or p.built_on(platform)]


def released_on(platform: str) -> list[Package]:
    return [p for p in packages() if platform in p.platforms]


def test_only_on(platform: str) -> list[Package]:
    """Backends built on ``platform`` for the test suite only: ``tvm[all]`` does not pull them
    there, so the test environments install them by name."""
    return [p for p in backends() if platform in p.test_platforms]


def index_requirements(extra: str) -> list[str]:
    """What ``tvm[extra]`` (``all`` included) pulls from the package index, for installing it
    with our wheels from the wheelhouse only (--no-index)."""
    if extra not in extras():
        raise ValueError(f"tvm has no extra [{extra}]; it has {sorted(extras())}")
    found: list[str] = []
    for package in backends():
        chosen = list(package.extras.items())[:1] if extra == "all" else list(package.extras.items())
        for core_extra, own in chosen:
            if extra in ("all", core_extra) and own:
                found += [r for r in package.index_requirements(own) if r not in found]
    return found


def test_requirements() -> list[str]:
    """Index packages the test suite installs beyond ``tvm[all]``'s: every backend's test-extras."""
    found: list[str] = []
    for package in backends():
        for own in package.test_extras:
            found += [r for r in package.index_requirements(own) if r not in found]
    return found


def test_require() -> list[str]:
    """TVM_TEST_REQUIRE_<NAME> variables `nox -s tests` sets: what CI machines provide for real."""
    return [f"TVM_TEST_REQUIRE_{name.upper()}" for p in backends() for name in p.test_require]


def bench_requirements() -> list[str]:
    """Index packages the device benchmarks need beside ``tvm[all]`` (their peers)."""
    return [r for p in backends() for r in p.bench_requirements]


def vendor_library_prefixes() -> tuple[str, ...]:
    return tuple(sorted({lib for p in backends() for lib in p.vendor_libraries}))


def repair_excludes() -> list[str]:
    """SONAMEs auditwheel must never graft: tvm-ffi, the core and every vendor driver."""
    vendors = [lib if ".so" in lib else f"{lib}.so*" for lib in vendor_library_prefixes()]
    return [*ALWAYS_EXCLUDED, *vendors]


def extras() -> dict[str, list[str]]:
    """Extras of the core and the meta-package: one per backend extra, plus ``all``."""
    result: dict[str, list[str]] = {}
    for package in backends():
        for extra in package.extras:
            if extra in result:
                raise ValueError(f"extra [{extra}] is declared by two packages")
            result[extra] = [package.requirement(extra)]
    # `all`: every backend once, each with its first (default) extra.
    result["all"] = [p.requirement(next(iter(p.extras))) for p in backends() if p.extras]
    return result


# ---- generated blocks of the core's and the meta-package's pyproject.toml ---------------------

_BEGIN = "# BEGIN generated by packages/release_train.py sync: edit the declarations, not this block"
_END = "# END generated"


def _extras_block(pin_core: bool) -> str:
    lines = [_BEGIN]
    if pin_core:
        lines.append(f'dependencies = ["{CORE}=={core().version}"]')
    lines.append("")
    lines.append("[project.optional-dependencies]")
    for extra, requirements in extras().items():
        rendered = ", ".join(f'"{r}"' for r in requirements)
        lines.append(f"{extra} = [{rendered}]")
    lines.append(_END)
    return "\n".join(lines)


def _with_block(text: str, block: str, path: Path) -> str:
    pattern = re.compile(re.escape(_BEGIN) + r".*?" + re.escape(_END), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{path}: no generated block (a line starting with {_BEGIN!r})")
    return pattern.sub(lambda _: block, text, count=1)


_CORE_PIN = re.compile(r'"tvm-runtime(?:>=|==)[^"]*"')


def _generated_files() -> dict[Path, str]:
    """Generated file -> the text it must have: the packages' pyproject.toml (extras, core
    pins) and every file that states the apache-tvm-ffi range."""
    result = {}
    for package in packages():
        path = package.directory / "pyproject.toml"
        text = path.read_text(encoding="utf-8")
        if package.role in ("core", "meta"):
            result[path] = _with_block(text, _extras_block(pin_core=package.role == "meta"), path)
        elif package.role == "backend":
            # Build requirement and run-time dependency alike: the ABI range of the policy.
            result[path] = _CORE_PIN.sub(f'"{core_requirement()}"', text)
    for path, text in tvm_ffi_rewrites().items():
        result[path] = _TVM_FFI_RANGE.sub(tvm_ffi_requirement(), result.get(path, text))
    return result


def stale_files() -> list[Path]:
    return [path for path, text in _generated_files().items() if path.read_text(encoding="utf-8") != text]


def sync() -> list[Path]:
    changed = stale_files()
    for path, text in _generated_files().items():
        if path in changed:
            path.write_text(text, encoding="utf-8")
    return changed


# ---- the core's C++ table ---------------------------------------------------------------------


def _cxx_string(value: str) -> str:
    return json.dumps(value)  # a JSON string of ASCII text is a valid C++ string literal


def cxx_table() -> str:
    """Entries of the core's "which wheel serves this" tables (``src/core/wheel_owners.h``), as
    the ``tvm_runtime_wheel_owners.inc`` that ``src/core/wheel_owners.cc`` includes."""
    tables = {
        "DEVICES": [
            f"  {{{dt}, {_cxx_string(p.distribution)}, {_cxx_string(p.name)}}}, \\"
            for p in backends()
            for dt in p.device_types
        ],
        "MODULE_KINDS": [
            f"  {{{_cxx_string(kind)}, {_cxx_string(p.distribution)}, "
            f"{p.device_types[0] if p.device_types else 'kDLCPU'}}}, \\"
            for p in backends()
            for kind in p.module_kinds
        ],
        "GLOBAL_FUNCTIONS": [
            f"  {{{_cxx_string(pattern)}, {_cxx_string(p.distribution)}}}, \\"
            for p in backends()
            for pattern in p.global_functions
        ],
    }
    out = [
        "// Generated from packages/*/pyproject.toml by packages/release_train.py: do not edit.",
        "// clang-format off",
    ]
    for name, rows in tables.items():
        out += [f"#define TVM_RUNTIME_WHEEL_OWNERS_{name} \\", *rows, ""]
    out.append("// clang-format on")
    return "\n".join(out) + "\n"


def as_json() -> dict:
    def encode(p: Package) -> dict:
        d = asdict(p)
        d["directory"] = str(p.directory.relative_to(PACKAGES.parent))
        d["name"] = p.name
        return d

    return {
        "packages": [encode(p) for p in packages()],
        "repair_excludes": repair_excludes(),
        "vendor_library_prefixes": list(vendor_library_prefixes()),
        "extras": extras(),
        "platforms": {
            platform: {
                "released": [p.distribution for p in released_on(platform)],
                "built": [p.distribution for p in packages() if p.built_on(platform)],
            }
            for platform in PLATFORMS
        },
        "abi_version": "{}.{}".format(*abi_version()),
        "core_requirement": core_requirement(),
        "tvm_ffi_requirement": tvm_ffi_requirement(),
    }


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "list"
    if command == "list":
        for p in packages():
            print(f"{p.role:8} {p.distribution:22} {p.version:8} {p.directory.relative_to(PACKAGES.parent)}")
    elif command == "json":
        print(json.dumps(as_json(), indent=2))
    elif command == "cxx" and len(argv) == 2:
        target = Path(argv[1])
        text = cxx_table()
        # Rewrite only on change, so CMake does not rebuild the core on every configure.
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    elif command == "check":
        stale = stale_files()
        for path in stale:
            print(
                f"{path}: extras, core pins or the {TVM_FFI} range are stale; "
                "run `python packages/release_train.py sync`",
                file=sys.stderr,
            )
        errors = policy_errors()
        for error in errors:
            print(f"versioning policy: {error}", file=sys.stderr)
        return 1 if stale or errors else 0
    elif command == "sync":
        for path in sync():
            print(f"rewrote {path}")
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
