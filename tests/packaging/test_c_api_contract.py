"""The lists of tvm_runtime/c_api.h (the installed header) against the installed wheels: every DSO
exports exactly the functions documented for it, and every global function a backend registers
(what loading it adds to tvm-ffi's registry, in a fresh process) is a name the header documents
for that backend (part 4: 4a for every backend, 4d's apache-tvm names, its own 4e prefix)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tvm_ffi
from backend_testing.elf import exported_symbols

from conftest import REPO

sys.path.insert(0, str(REPO / "packages"))
import release_train  # noqa: E402

BACKENDS = release_train.backends()


def _header() -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "tvm.config", "--includedir"],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    return (Path(proc.stdout.strip()) / "tvm_runtime" / "c_api.h").read_text()


HEADER = _header()


def _section(label: str, end: str) -> str:
    start = HEADER.index(f" * {label}")
    return HEADER[start : HEADER.index(f" * {end}", start)]


def _pattern(name: str) -> re.Pattern[str]:
    """`ffi.Module.load_from_bytes.<kind>` / `tvm_runtime.cuda.*` as a regex of full names."""
    parts = re.split(r"(<[^>]+>|\*)", name)
    regex = "".join("[^.]+" if p.startswith("<") else ".+" if p == "*" else re.escape(p) for p in parts)
    return re.compile(regex + r"\Z")


def _documented_names(section: str) -> list[str]:
    """Names that start an entry (` *   name ...`, or a comma-separated run of them)."""
    name = r"(?:\w+\.)+(?:\w+|<[^>]+>|\*)"
    found = []
    for m in re.finditer(rf"^ \*   ({name}(?:, {name})*)", section, re.MULTILINE):
        found += m.group(1).split(", ")
    return found


def test_every_dso_exports_exactly_what_the_header_declares():
    core_exports = set(re.findall(r"TVM_RUNTIME_DLL [\w ]+?\**\s*\b(\w+)\(", HEADER))
    entry_points = set(re.findall(r'#define TVM_RUNTIME_BACKEND_\w+_SYMBOL "(\w+)"', HEADER))
    assert {"TVMRuntimeInitialize", "TVMBackendAnyListResetItem", "TVMRuntimeGetDeviceAPI"} <= core_exports
    assert entry_points == {"TVMRuntimeBackendABIVersion", "TVMRuntimeBackendRegister"}
    import tvm

    package = Path(tvm.__file__).parent
    assert exported_symbols(package / "lib" / "libtvm_runtime.so") == core_exports
    for backend in BACKENDS:
        dso = package / "backend" / backend.name / f"libtvm_runtime_{backend.name}.so"
        assert exported_symbols(dso) == entry_points, dso


PROBE = """
import json, tvm, tvm_ffi
types = [int(t) for t in tvm.get_global_func("runtime.RegisteredDeviceTypes")()]
print(json.dumps({"names": tvm_ffi.registry.list_global_func_names(), "device_types": types}))
"""


def _registry(**env: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env={**os.environ, **env}, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def core_only() -> dict:
    return _registry(TVM_DEVICE_BACKEND_AUTOLOAD="0")


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
def test_backend_globals_follow_the_documented_names(backend, core_only):
    every_backend = [_pattern(n) for n in _documented_names(_section("4a.", "4b."))]
    apache_names = _documented_names(_section("4d.", "4e."))
    private = {n: _pattern(n) for n in _documented_names(_section("4e.", "File names"))}
    assert f"tvm_runtime.{backend.name}.*" in private, "c_api.h 4e lists no prefix for this backend"
    allowed = [*every_backend, private[f"tvm_runtime.{backend.name}.*"]]
    # An apache-tvm name belongs to the backend that declares it, or that it names.
    allowed += [
        _pattern(n) for n in apache_names if n in backend.global_functions or f".{backend.name}." in n
    ]
    # 4f: a prefix shared across wheels, registered by the wheel that declares it.
    part_4f = HEADER[HEADER.index(" * 4f.") : HEADER.index("*/", HEADER.index(" * 4f."))]
    allowed += [_pattern(n) for n in _documented_names(part_4f) if n in backend.global_functions]

    loaded = _registry(TVM_BACKENDS=backend.name)
    serves = {int(tvm_ffi.DLDeviceType[t]) for t in backend.device_types}
    added = sorted(set(loaded["names"]) - set(core_only["names"]))
    # Proof that the backend did load here: a device table of its own, or (extra) its functions.
    assert serves & set(loaded["device_types"]) if serves else added, loaded["device_types"]
    stray = [name for name in added if not any(p.match(name) for p in allowed)]
    assert not stray, f"{backend.name} registers globals c_api.h part 4 does not document for it: {stray}"


def test_every_private_prefix_belongs_to_a_backend():
    documented = {n.split(".")[1] for n in _documented_names(_section("4e.", "File names"))}
    assert documented == {b.name for b in BACKENDS}
