"""Configure and build a CMake project of the tests (tests/cpp, tests/cpp_deploy) with the venv's
own cmake and ninja and the host compiler, against the installed wheels."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def tool(name: str) -> str:
    """The real cmake/ninja binary of the venv's pip packages (their bin/ entries are Python
    scripts, which a build with no Python on PATH cannot run), else the one on PATH."""
    try:
        if name == "cmake":
            import cmake

            bin_dir = Path(cmake.CMAKE_BIN_DIR)
        else:
            import ninja

            bin_dir = Path(ninja.BIN_DIR)
        if (bin_dir / name).exists():
            return str(bin_dir / name)
    except (ImportError, AttributeError):
        pass
    found = shutil.which(name)
    assert found, f"{name} is needed to build the C++ tests (pip install {name})"
    return found


def package_config(package: str, flag: str) -> str:
    """What ``python -m <package>.config <flag>`` prints (tvm, tvm_ffi: --cmakedir, --libdir, ...)."""
    argv = [sys.executable, "-m", f"{package}.config", flag]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def configure_command(source: Path, build: Path, *args: str) -> list[str]:
    """``cmake -S source -B build`` with Ninja and g++, then ``args`` (``-D...`` options)."""
    return [
        tool("cmake"),
        "-S",
        str(source),
        "-B",
        str(build),
        "-G",
        "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}",
        "-DCMAKE_CXX_COMPILER=g++",
        *args,
    ]


def pip_wheel_command(source: Path, wheel_dir: Path, build_dir: Path, *settings: str) -> list[str]:
    """``pip wheel`` of a scikit-build-core project against this venv's build tools and installed
    core (no isolation, no dependencies) into ``wheel_dir``, building in ``build_dir``, with
    ``--config-settings`` ``settings`` (``cmake.define.X=Y``, ...)."""
    return [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-build-isolation",
        "--no-deps",
        "--wheel-dir",
        str(wheel_dir),
        f"--config-settings=build-dir={build_dir}",
        *(f"--config-settings={setting}" for setting in settings),
        str(source),
    ]


def cmake_build(source: Path, build: Path, build_type: str, defines: dict[str, str]) -> None:
    """Configure ``source`` into ``build`` (Ninja, g++) with ``-D<key>=<value>`` each, then build;
    a failure quotes the tools' output."""
    configure = configure_command(
        source,
        build,
        f"-DCMAKE_BUILD_TYPE={build_type}",
        *(f"-D{key}={value}" for key, value in defines.items()),
    )
    for step in (configure, [tool("cmake"), "--build", str(build)]):
        proc = subprocess.run(step, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
