"""ci/check_wheels.py holds every native wheel to auditwheel's manylinux_2_28 policy for its
architecture: GLIBC, and also GLIBCXX, CXXABI and GCC symbol versions (what the libstdc++ /
libgcc_s a DSO binds may require of the user's machine), and the DSO's ELF machine.

The fixture DSOs are real ELF files linked by zig (the pinned build toolchain) for x86_64 and
aarch64 against a stand-in ``libstdc++.so.6`` whose symbol versions the test chooses: one
within the policy's limits, some beyond.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "ci"))
import check_wheels  # noqa: E402

# A stand-in libstdc++.so.6: one function per version node (GLIBCXX_3.4.24 is the newest the
# manylinux_2_28 policy allows; the others are newer than it allows).
STUB = "".join(f"void tvmrt_{name}(void) {{}}\n" for name in ("old", "new", "new_abi", "new_gcc"))
STUB_VERSIONS = """\
GLIBCXX_3.4.24 { global: tvmrt_old; local: *; };
GLIBCXX_3.4.30 { global: tvmrt_new; };
CXXABI_1.3.15 { global: tvmrt_new_abi; };
GCC_13.0.0 { global: tvmrt_new_gcc; };
"""
USERS = {
    "libok.so": "void tvmrt_old(void);\nvoid use(void) { tvmrt_old(); }\n",
    "libtoo_new.so": (
        "void tvmrt_old(void); void tvmrt_new(void); void tvmrt_new_abi(void); void tvmrt_new_gcc(void);\n"
        "void use(void) { tvmrt_old(); tvmrt_new(); tvmrt_new_abi(); tvmrt_new_gcc(); }\n"
    ),
}


def _zig_cc(arch: str, *args: str) -> None:
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", f"{arch}-linux-gnu.2.28", "-shared", "-fPIC"]
    proc = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module", params=check_wheels.WHEEL_ARCHES)
def fixture_dsos(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    arch = request.param
    work = tmp_path_factory.mktemp(f"symbols-{arch}")
    (work / "stub.c").write_text(STUB)
    (work / "stub.map").write_text(STUB_VERSIONS)
    stub = work / "libstdc++.so.6"
    _zig_cc(
        arch,
        str(work / "stub.c"),
        "-o",
        str(stub),
        "-Wl,-soname,libstdc++.so.6",
        f"-Wl,--version-script={work / 'stub.map'}",
    )
    for name, source in USERS.items():
        (work / f"{name}.c").write_text(source)
        _zig_cc(arch, str(work / f"{name}.c"), "-o", str(work / name), str(stub))
    return arch, work


def _wheel(directory: Path, arch: str, *dsos: Path) -> Path:
    wheel = directory / f"tvm_runtime_fixture-0.1.0-py3-none-manylinux_2_28_{arch}.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for dso in dsos:
            zf.write(dso, f"tvm/backend/fixture/{dso.name}")
    return wheel


def test_policy_comes_from_auditwheel_and_differs_by_architecture():
    x86, arm = (check_wheels.manylinux_symbol_versions(arch) for arch in ("x86_64", "aarch64"))
    assert {"GLIBC", "GLIBCXX", "CXXABI", "GCC"} <= set(x86) & set(arm)
    assert "2.28" in x86["GLIBC"] and "2.29" not in x86["GLIBC"]
    assert "2.2.5" in x86["GLIBC"] and "2.2.5" not in arm["GLIBC"]  # aarch64 glibc starts at 2.17


def test_dso_within_the_policy_passes(fixture_dsos, tmp_path):
    arch, work = fixture_dsos
    machine, needs = check_wheels.elf_facts(work / "libok.so")
    assert machine == check_wheels.ELF_MACHINES[arch] and needs["libstdc++.so.6"] == {"GLIBCXX_3.4.24"}
    assert check_wheels.check_platform_tags([_wheel(tmp_path, arch, work / "libok.so")]) == []


def test_dso_needing_newer_glibcxx_cxxabi_gcc_is_refused(fixture_dsos, tmp_path):
    arch, work = fixture_dsos
    errors = check_wheels.check_platform_tags(
        [_wheel(tmp_path, arch, work / "libok.so", work / "libtoo_new.so")]
    )
    allowed = check_wheels.manylinux_symbol_versions(arch)
    assert len(errors) == 3, errors
    for version in ("GLIBCXX_3.4.30", "CXXABI_1.3.15", "GCC_13.0.0"):
        family = version.partition("_")[0]
        (error,) = [e for e in errors if f"needs {version} from libstdc++.so.6" in e]
        assert "tvm/backend/fixture/libtoo_new.so" in error and f"on {arch}" in error
        # The limit named is the policy's newest version of that family.
        newest = max(
            (v for v in allowed[family] if v.replace(".", "").isdigit()),
            key=lambda v: tuple(map(int, v.split("."))),
        )
        assert f"allows {family} up to {family}_{newest}" in error


def test_dso_of_the_other_architecture_is_refused(fixture_dsos, tmp_path):
    arch, work = fixture_dsos
    other = next(a for a in check_wheels.WHEEL_ARCHES if a != arch)
    (error,) = check_wheels.check_platform_tags([_wheel(tmp_path, other, work / "libok.so")])
    assert f"libok.so is built for {check_wheels.ELF_MACHINES[arch]}, not {other}" in error
